"""The model adapter against real subprocesses (tiny scripts run with sys.executable): success,
timeout, bad JSON, schema mismatch, non-zero exit, output cap; and the recorded backend."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import textwrap
import time
from datetime import date
from pathlib import Path

import pytest
from pydantic import ValidationError

from verifier.model import (
    BaselineRequest,
    CommandBackend,
    Evidence,
    ModelAnswerInvalidError,
    ModelConfig,
    ModelError,
    ModelExitError,
    ModelNotJSONError,
    ModelOutputTooLargeError,
    ModelStartError,
    ModelTimeoutError,
    RecordedBackend,
    RecordingBackend,
    RecordingMissingError,
    ResolveRequest,
    ask,
    backend_from_config,
    record_answer,
    request_bytes,
    request_sha256,
)

BASELINE = BaselineRequest(hypothesis_id="H1", revision=2, statement="Verification layers ship first.",
                           criterion="Three vendors sell a verification layer by the check date.")
RESOLVE = ResolveRequest(
    hypothesis_id="H1", revision=2, statement=BASELINE.statement, criterion=BASELINE.criterion,
    measure="Count vendors with a public price list for a verification layer.", check_date=date(2026, 11, 1),
    evidence=[Evidence(link_id="lnk_" + "1" * 16, finding_id="fnd_" + "2" * 16, stance="supports",
                       statement="Seven of eleven teams paid for a verification layer.",
                       excerpt="Seven of eleven teams paid for a verification layer.",
                       limitation="One analyst's sample.", source_id="src_" + "3" * 16)],
)


def script(tmp_path: Path, body: str) -> tuple[str, ...]:
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent(body))
    return (sys.executable, str(path))


ECHO = """
    import json, sys
    request = json.loads(sys.stdin.buffer.read())
    sys.stderr.write("thinking\\n")
    answer = {"kind": request["kind"], "verdict": "true", "confidence": 0.8, "model": "tiny-1"}
    if request["kind"] == "resolve":
        answer["rationale"] = "%d evidence links checked" % len(request["evidence"])
    sys.stdout.write(json.dumps(answer))
"""


def test_success_records_hashes_of_the_exact_bytes(tmp_path: Path) -> None:
    backend = CommandBackend(script(tmp_path, ECHO), timeout_s=30)
    reply = ask(backend, BASELINE)
    assert reply.answer.verdict == "true" and reply.answer.confidence == 0.8
    assert reply.backend == "command" and not reply.recorded and reply.model == "tiny-1"
    assert reply.request_sha256 == hashlib.sha256(request_bytes(BASELINE)).hexdigest() == request_sha256(BASELINE)
    expected_answer = json.dumps({"kind": "baseline", "verdict": "true", "confidence": 0.8, "model": "tiny-1"})
    assert reply.answer_sha256 == hashlib.sha256(expected_answer.encode()).hexdigest()
    resolved = ask(backend, RESOLVE)
    assert resolved.answer.rationale == "1 evidence links checked"


def test_the_request_is_canonical_and_carries_no_corpus() -> None:
    data = request_bytes(BASELINE)
    assert data == json.dumps(json.loads(data), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    assert set(json.loads(data)) == {"kind", "version", "instructions", "hypothesis_id", "revision", "statement",
                                     "criterion"}
    with pytest.raises(ValidationError):
        BaselineRequest.model_validate({**BASELINE.model_dump(), "evidence": []})


def test_the_command_gets_an_argument_list_not_a_shell(tmp_path: Path) -> None:
    marker, seen = tmp_path / "pwned", tmp_path / "argv.json"
    argv = script(tmp_path, f"""
        import json, sys
        sys.stdin.read()
        open({str(seen)!r}, "w").write(json.dumps(sys.argv[1:]))
        print(json.dumps({{"kind": "baseline", "verdict": "false", "confidence": 0.1}}))
    """)
    argument = f"x; touch {marker}"
    reply = ask(CommandBackend((*argv, argument), timeout_s=30), BASELINE)
    assert not marker.exists()
    assert json.loads(seen.read_text()) == [argument]
    assert reply.answer.verdict == "false"
    with pytest.raises(ValueError, match="non-empty list"):
        CommandBackend(())


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    argv = script(tmp_path, f"""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        sys.stderr.write("started a helper\\n"); sys.stderr.flush()
        time.sleep(60)
    """)
    started = time.monotonic()
    with pytest.raises(ModelTimeoutError, match="timeout of 1 s") as caught:
        ask(CommandBackend(argv, timeout_s=1.0), BASELINE)
    assert time.monotonic() - started < 15
    assert "started a helper" in caught.value.stderr_tail
    assert caught.value.request_sha256 == request_sha256(BASELINE)
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.05)
    assert not _alive(child), "the grandchild outlived the timeout"


@pytest.mark.slow  # a real helper process that outlives the call
def test_a_process_that_left_the_group_does_not_hold_the_call(tmp_path: Path) -> None:
    """A helper that escaped the process group keeps stdout open; the call still returns."""
    argv = script(tmp_path, """
        import json, subprocess, sys
        sys.stdin.read()
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3)"], start_new_session=True)
        print(json.dumps({"kind": "baseline", "verdict": "true", "confidence": 0.5}), flush=True)
    """)
    started = time.monotonic()
    reply = ask(CommandBackend(argv, timeout_s=30), BASELINE)
    assert reply.answer.verdict == "true"
    assert time.monotonic() - started < 10


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is dead for our purposes.
    try:
        with Path(f"/proc/{pid}/stat").open() as handle:
            return handle.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_bad_json(tmp_path: Path) -> None:
    argv = script(tmp_path, """
        import sys
        sys.stdin.read()
        print("Sure! The verdict is true.")
    """)
    with pytest.raises(ModelNotJSONError, match=r"not JSON.*Sure! The verdict") as caught:
        ask(CommandBackend(argv, timeout_s=30), RESOLVE)
    assert caught.value.answer_sha256 == hashlib.sha256(b"Sure! The verdict is true.\n").hexdigest()


@pytest.mark.parametrize(("answer", "complaint"), [
    ({"kind": "baseline", "verdict": True, "confidence": 0.5}, "verdict"),
    ({"kind": "baseline", "verdict": "true", "confidence": "0.5"}, "confidence"),
    ({"kind": "baseline", "verdict": "true", "confidence": 1.5}, "confidence"),
    ({"kind": "baseline", "verdict": "unresolved", "confidence": 0.5}, "verdict"),
    ({"kind": "resolve", "verdict": "true", "confidence": 0.5, "rationale": "x"}, "kind"),
    ({"kind": "baseline", "verdict": "true", "confidence": 0.5, "corpus": []}, "unknown field"),
    ({"kind": "baseline", "verdict": "true"}, "required field is missing"),
    ([1, 2], "expected an object"),
])
def test_answers_not_matching_the_schema(tmp_path: Path, answer: object, complaint: str) -> None:
    """A baseline call's error names the problem on `.detail` only: the message says which kind of
    problem it was and nothing of the answer (docs/resolver.md)."""
    argv = script(tmp_path, f"""
        import sys
        sys.stdin.read()
        sys.stdout.write({json.dumps(answer)!r})
    """)
    with pytest.raises(ModelAnswerInvalidError, match="does not match the baseline answer schema") as caught:
        ask(CommandBackend(argv, timeout_s=30), BASELINE)
    assert complaint in caught.value.detail


@pytest.mark.parametrize(("body", "error"), [
    ('sys.stdout.write("I think it is true")', ModelNotJSONError),
    ('sys.stdout.write(\'{"kind": "baseline", "verdict": true, "confidence": 0.9}\')', ModelAnswerInvalidError),
    ('sys.stderr.write("leaning true, 0.9\\n"); sys.exit(1)', ModelExitError),
])
def test_baseline_errors_withhold_what_the_model_said(tmp_path: Path, body: str, error: type[ModelError]) -> None:
    """An error message reaches ledger rows and logs, so for a baseline call it never quotes the model."""
    argv = script(tmp_path, f"""
        import sys
        sys.stdin.read()
        {body}
    """)
    with pytest.raises(error) as caught:
        ask(CommandBackend(argv, timeout_s=30), BASELINE)
    assert "true" not in str(caught.value).lower().replace("'true' or 'false'", "")
    assert "withheld" in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    assert "true" in caught.value.detail.lower()  # kept for the Resolver's own log, off the message


def test_duplicate_keys_are_refused(tmp_path: Path) -> None:
    argv = script(tmp_path, """
        import sys
        sys.stdin.read()
        sys.stdout.write('{"kind": "baseline", "verdict": "true", "verdict": "false", "confidence": 0.5}')
    """)
    with pytest.raises(ModelAnswerInvalidError) as caught:
        ask(CommandBackend(argv, timeout_s=30), BASELINE)
    assert "twice" in caught.value.detail and "verdict" not in str(caught.value)


def test_non_zero_exit_reports_status_and_stderr_tail(tmp_path: Path) -> None:
    argv = script(tmp_path, """
        import sys
        sys.stdin.read()
        sys.stderr.write("x" * 5000 + "\\nrate limited: try again later\\n")
        sys.exit(3)
    """)
    with pytest.raises(ModelExitError, match=r"(?s)exited with status 3.*rate limited") as caught:
        ask(CommandBackend(argv, timeout_s=30), RESOLVE)
    assert caught.value.returncode == 3
    assert len(caught.value.stderr_tail) <= 2000


def test_a_command_that_ignores_stdin_is_judged_by_its_exit(tmp_path: Path) -> None:
    argv = script(tmp_path, """
        import sys
        sys.exit(5)
    """)
    big = BASELINE.model_copy(update={"statement": "s" * 1_000_000})
    with pytest.raises(ModelExitError, match="failed; details withheld") as caught:
        ask(CommandBackend(argv, timeout_s=30), big)
    assert caught.value.returncode == 5 and "status 5" in caught.value.headline  # a sealed call's message omits it


def test_output_cap(tmp_path: Path) -> None:
    argv = script(tmp_path, """
        import sys, time
        sys.stdin.read()
        while True:
            sys.stdout.write("x" * 65536); sys.stdout.flush()
    """)
    with pytest.raises(ModelOutputTooLargeError, match="more than 100000 bytes"):
        ask(CommandBackend(argv, timeout_s=30, max_output_bytes=100_000), BASELINE)


def test_a_missing_command(tmp_path: Path) -> None:
    with pytest.raises(ModelStartError, match="could not start"):
        ask(CommandBackend((str(tmp_path / "no-such-model"),), timeout_s=5), BASELINE)


# --- the recorded backend -----------------------------------------------------------------


def test_recorded_answers_say_they_are_recorded(tmp_path: Path) -> None:
    folder = tmp_path / "recordings"
    answer = {"kind": "resolve", "verdict": "true", "confidence": 0.9, "rationale": "lnk_1111 supports it.",
              "model": "frontier-1"}
    path = record_answer(folder, RESOLVE, json.dumps(answer).encode())
    assert path.name == f"{request_sha256(RESOLVE)}.json"
    reply = ask(RecordedBackend(folder), RESOLVE)
    assert reply.backend == "recorded" and reply.recorded
    assert reply.answer.model == reply.model == "recorded:frontier-1"
    assert reply.answer.rationale == "[recorded answer] lnk_1111 supports it."
    assert reply.duration_s == 0.0 and str(path) == reply.detail
    assert reply.answer_sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    # An answer without a model name is still marked.
    record_answer(folder, BASELINE, b'{"kind": "baseline", "verdict": "false", "confidence": 0.3}')
    assert ask(RecordedBackend(folder), BASELINE).model == "recorded:unknown"


def test_a_missing_recording_names_the_request(tmp_path: Path) -> None:
    with pytest.raises(RecordingMissingError, match=request_sha256(BASELINE)):
        ask(RecordedBackend(tmp_path), BASELINE)


def test_a_recorded_answer_is_checked_like_a_live_one(tmp_path: Path) -> None:
    record_answer(tmp_path, BASELINE, b'{"kind": "baseline", "verdict": "maybe", "confidence": 0.3}')
    with pytest.raises(ModelAnswerInvalidError, match="recorded backend"):
        ask(RecordedBackend(tmp_path), BASELINE)


def test_recording_live_calls_then_replaying_them(tmp_path: Path) -> None:
    folder = tmp_path / "recordings"
    live = ask(RecordingBackend(CommandBackend(script(tmp_path, ECHO), timeout_s=30), folder), BASELINE)
    replay = ask(RecordedBackend(folder), BASELINE)
    assert live.backend == "command" and replay.backend == "recorded"
    assert live.answer_sha256 == replay.answer_sha256
    assert replay.model == "recorded:" + live.model


def test_config(tmp_path: Path) -> None:
    recorded = backend_from_config(ModelConfig(backend="recorded", recordings="rec"), base=tmp_path)
    assert isinstance(recorded, RecordedBackend) and recorded.folder == tmp_path / "rec"
    command = backend_from_config(ModelConfig(backend="command", command=["model", "--json"], timeout_s=9),
                                  base=tmp_path)
    assert isinstance(command, CommandBackend) and command.argv == ("model", "--json") and command.timeout_s == 9
    with pytest.raises(ValidationError, match="argument list"):
        ModelConfig(backend="command")
    with pytest.raises(ValidationError, match="recordings"):
        ModelConfig(backend="recorded")
    with pytest.raises(ValidationError):
        ModelConfig.model_validate({"backend": "command", "command": "model --json"})
