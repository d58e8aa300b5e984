"""The older catalogue's four (issue 21, point 8): the scanner decodes escapes before it removes
invisible characters; front matter that any YAML reader could see differently is refused; a
write that fails for lack of space leaves no object behind; a writer waits on a project lock held
by a live process only up to a bound, then answers busy."""

from __future__ import annotations

import base64
import errno
import gzip
import json
import os
import subprocess
import time
from datetime import timedelta
from pathlib import Path

import pytest

from tests.support.edits import edit
from tests.support.full_disk import loose_objects, small_disk_under, submit_once
from tests.support.hostile import FAKE_AWS_KEY, assert_refused_cleanly, traced_submission
from tests.support.locks import lock_held
from tests.support.service_harness import RW, live_leaf, start
from tests.support.world import NOTE_ID, NOW, ROOT, SLUG, World
from verifier.cli.app import EXIT_BUSY, EXIT_RETRY, exit_code_of
from verifier.constants import LOCK_WAIT_S
from verifier.errors import BusyError, RetryableError
from verifier.formats.leaf import LeafContract
from verifier.formats.project import parse_project
from verifier.secrets import scan_bytes
from verifier.secrets.layers import disguising
from verifier.secrets.scan import _HIDING_ESCAPE
from verifier.secrets.tokens import KIND as TOKEN_KIND
from verifier.secrets.views import token_candidates
from verifier.state.layout import PROJECT_FILE, default_write_rules
from verifier.store.home import Home, Settings
from verifier.writes.project import add_leaf

# Real `rw` processes, a real service or real git pushes: end to end, so in the slow set.
pytestmark = pytest.mark.slow

AWS = "AWS Access Key"


def _escaped_json(text: str) -> bytes:
    """text as a JSON writer with ensure_ascii escapes it: every non-ASCII character as \\uXXXX."""
    return json.dumps({"content": text}).encode()


def _disguised(mark: str) -> str:
    return f"id {FAKE_AWS_KEY[:9]}{mark}{FAKE_AWS_KEY[9:]} ok"


# --- (a) escapes are decoded before invisible characters are removed ---------------------------


@pytest.mark.parametrize("mark", ["\u200b", "\u00ad", "\u2060", "\ufeff", "\u200d", "\ufe0f", "\U000e0020"],
                         ids=["zwsp", "soft-hyphen", "word-joiner", "bom", "zwj", "variation-selector", "tag"])
def test_an_escaped_invisible_character_inside_a_key_is_seen_through(mark: str) -> None:
    data = _escaped_json(_disguised(mark))
    assert b"\\u" in data and mark.encode() not in data  # the character is there only as an escape
    hits = [hit for hit in scan_bytes(data, name="events.jsonl") if hit.kind == AWS]
    assert [(hit.encoding, data[hit.offset:hit.offset + 4]) for hit in hits] == [("json-escape", b"AKIA")]


def test_an_upper_case_escape_and_an_escaped_full_width_letter_are_seen_through() -> None:
    upper = _escaped_json(_disguised("\u200b")).replace(b"\\u200b", b"\\u200B")
    full_width = _escaped_json(_disguised("").replace("Z", "\uff3a", 1))
    assert AWS in {hit.kind for hit in scan_bytes(upper, name="e")}
    assert AWS in {hit.kind for hit in scan_bytes(full_width, name="e")}


@pytest.mark.parametrize("wrap", [
    pytest.param(base64.b64encode, id="base64"),
    pytest.param(lambda raw: base64.b64encode(gzip.compress(raw, mtime=0)), id="gzip-then-base64"),
    pytest.param(lambda raw: raw.hex().encode(), id="hex"),
    pytest.param(lambda raw: base64.b64encode(_escaped_json(raw.decode())), id="base64-of-escaped-json"),
    pytest.param(lambda raw: json.dumps({"out": _escaped_json(raw.decode()).decode()}).encode(),
                 id="escape-inside-escaped-json"),
])
def test_an_invisible_character_under_another_encoding_is_seen_through(wrap: object) -> None:
    assert callable(wrap)
    blob = wrap((_disguised("\u200b") + "\n").encode())
    assert AWS in {hit.kind for hit in scan_bytes(b"$ cat blob\n" + blob + b"\n", name="e")}


def test_our_token_with_an_escaped_zero_width_space_is_found_for_revocation(world: World) -> None:
    victim = world.home.identities.add("agent-b", "op-b", "agent", NOW)
    data = _escaped_json(f"export RW_TOKEN={victim[:10]}\u200b{victim[10:]}")
    assert TOKEN_KIND in {hit.kind for hit in scan_bytes(data, name="e")}
    assert victim in token_candidates(data)
    # Three decodings but two layers: removing invisible characters is not a layer of its own.
    assert victim in token_candidates(base64.b64encode(data))


def test_honest_escapes_stay_quiet() -> None:
    text = ("caf\u00e9 \u2026 \u2019quoted\u2019 \U0001f389 done \u00a0 \u2014 a\u200bb "
            "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")
    data = _escaped_json(text)
    assert scan_bytes(data, name="e") == []
    assert scan_bytes(base64.b64encode(text.encode()), name="e") == []


def test_the_frozen_table_of_escaped_disguises_covers_every_disguising_character() -> None:
    missed = []
    for code in [*range(0x80, 0x30000), *range(0xE0000, 0xE1000)]:
        char = chr(code)
        if not disguising(char):
            continue
        escape = json.dumps(char).strip('"').encode()  # \uXXXX, or a surrogate pair beyond the BMP
        if _HIDING_ESCAPE.match(escape) is None:
            missed.append(f"U+{code:04X}")
    assert missed == [], "add these to verifier/secrets/layers.py ESCAPED_DISGUISES_*"


def test_a_person_edit_holding_a_key_with_an_escaped_zero_width_space_is_refused(world: World) -> None:
    token = world.home.identities.add("ericxtang", "ericxtang", "human", NOW)
    old = world.repo.view(world.tip()).read("README.md")
    assert old is not None
    config = b'\n```json\n' + _escaped_json(_disguised("\u200b")) + b'\n```\n'
    verdict = assert_refused_cleanly(world, edit(world, token, {"README.md": old + config}), "secret_in_patch",
                                     purged=True)
    assert FAKE_AWS_KEY[9:] not in verdict.line()


def test_a_person_edit_with_honest_escapes_lands(world: World) -> None:
    token = world.home.identities.add("ericxtang", "ericxtang", "human", NOW)
    old = world.repo.view(world.tip()).read("README.md")
    assert old is not None
    honest = b'\n```json\n' + _escaped_json("caf\u00e9 \u2026 \U0001f389 a\u200bb") + b'\n```\n'
    verdict = world.submit(edit(world, token, {"README.md": old + honest}))
    assert verdict.outcome == "accepted", verdict.line()


def test_a_trace_printing_escaped_json_with_a_disguised_key_is_refused(world: World) -> None:
    world.leaf("hostile-1")
    printed = _escaped_json(_disguised("\u200b")).decode()  # a tool printed JSON written with ensure_ascii
    patch = (b"diff --git a/findings/ab/x.md b/findings/ab/x.md\nnew file mode 100644\n--- /dev/null\n"
             b"+++ b/findings/ab/x.md\n@@ -0,0 +1 @@\n+hello\n")
    submission = traced_submission(world, "hostile-1", patch, events=[("tool_result", printed)])
    assert b"\\\\u200b" in submission.bundle["events.jsonl"]
    assert_refused_cleanly(world, submission, "secret_in_trace", purged=True)
    assert SLUG in world.home.projects()


# --- (b) front matter any reader could read differently is refused ---------------------------


def _project_edit(world: World, rule_line: str) -> tuple[bytes, bytes]:
    """PROJECT.md with its question as a block scalar holding `rule_line`, then `holds: [sources]`."""
    old = world.repo.view(world.tip()).read(PROJECT_FILE)
    assert old is not None
    text = old.decode()
    question = next(line for line in text.splitlines() if line.startswith("question: "))
    new = text.replace(question, f"question: |\n  Will verification layers ship first?\n{rule_line}\n  (asked in 2026)")
    new = new.replace("holds: []", "holds: [sources]")
    assert new != text and "holds: [sources]" in new
    return old, new.encode()


@pytest.mark.parametrize("rule_line", ["  ---", "  --- ", "  -----", "  ..."],
                         ids=["indented", "trailing", "dashes", "dots"])
def test_a_fence_some_reader_sees_inside_project_front_matter_is_refused(world: World, rule_line: str) -> None:
    token = world.home.identities.add("ericxtang", "ericxtang", "human", NOW)
    _, new = _project_edit(world, rule_line)
    tip = world.tip()
    verdict = world.submit(edit(world, token, {PROJECT_FILE: new}))
    assert verdict.outcome == "rejected" and verdict.rejections[0].code == "bad_project", verdict.line()
    assert "trim lines" in verdict.line() and "line 5" in verdict.line()
    assert world.repo.changed_paths(tip, world.tip()) == ["ledger/000000.jsonl"]  # the refusal's row only
    assert parse_project(world.repo.view(world.tip()).read(PROJECT_FILE) or b"", PROJECT_FILE)[0].holds == []


def test_project_front_matter_with_dashes_inside_a_line_lands(world: World) -> None:
    token = world.home.identities.add("ericxtang", "ericxtang", "human", NOW)
    _, new = _project_edit(world, "  --- as the 2025 survey put it ---")
    verdict = world.submit(edit(world, token, {PROJECT_FILE: new}))
    assert verdict.outcome == "accepted", verdict.line()
    assert parse_project(world.repo.view(world.tip()).read(PROJECT_FILE) or b"", PROJECT_FILE)[0].holds == ["sources"]


# --- (c) a write that fails for lack of space leaves no object behind -------------------------


def test_a_full_disk_during_a_landing_leaves_no_object_behind(world: World) -> None:
    world.leaf("extract-1")
    submission = world.extract("extract-1")
    tip, objects = world.tip(), world.objects()

    def full(step: str) -> None:
        if step == "ledger":  # the contribution commit and its trees are written by now
            raise OSError(errno.ENOSPC, "No space left on device")

    world.home.crash_point = full
    with pytest.raises(RetryableError, match="disk is full"):
        world.submit(submission)
    assert world.tip() == tip and world.objects() == objects
    world.home.crash_point = lambda _step: None
    assert world.submit(submission).outcome == "accepted"  # control: the same request, with space


def _rw(home: Path, *args: str, token: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([RW, *args], env={**os.environ, "RW_HOME": str(home), "RW_TOKEN": token},
                          capture_output=True, text=True, timeout=120, check=False)


def test_a_real_full_disk_in_the_cli_leaves_no_object_behind(world: World, tmp_path: Path) -> None:
    token = world.home.identities.add("ericxtang", "ericxtang", "human", NOW)
    repo, tip = world.repo.path, world.tip()
    add = ("leaf", "add", SLUG, "--kind", "extract", "--source", NOTE_ID)
    with small_disk_under(repo, tmp_path / "disk") as disk:
        disk.fill()
        before, free = loose_objects(repo), disk.free()
        done = _rw(world.home.root, *add, token=token)
        assert done.returncode == EXIT_RETRY, done.stderr
        assert "nothing was kept" in done.stderr, done.stderr
        assert loose_objects(repo) == before and disk.free() == free  # and the space came back
        assert world.home.project(SLUG).tip() == tip
        disk.empty()
        done = _rw(world.home.root, *add, token=token)  # control: with space, the same command lands
        assert done.returncode == 0, done.stderr
    assert world.home.project(SLUG).tip() != tip


def test_a_real_full_disk_in_the_service_leaves_no_object_behind(world: World, tmp_path: Path) -> None:
    live_leaf(world.home, "extract-1")
    submission = world.extract("extract-1")
    repo, tip = world.repo.path, world.tip()
    with small_disk_under(repo, tmp_path / "disk") as disk:
        server = start(world.home.root)
        try:
            disk.fill()  # after start-up, whose recovery may use some of the room
            before, free = loose_objects(repo), disk.free()
            reply = submit_once(server.client(world.agent.token), submission, key="full-disk-1")
            assert (reply.status, reply.error_code) == (503, "retry_later"), reply.body
            assert loose_objects(repo) == before and disk.free() == free
            assert world.home.project(SLUG).tip() == tip
            disk.empty()
            reply = submit_once(server.client(world.agent.token), submission, key="full-disk-1")
            assert reply.status == 201 and reply.body["verdict"]["outcome"] == "accepted", reply.body  # control
        finally:
            server.stop()


# --- (d) a lock held by a live process is waited on up to a bound, then answered busy -----------


def _short_wait(home: Home, seconds: float = 1.0) -> Home:
    """The same home with config.json `lock_wait_s` set, re-read (as every command reads it)."""
    home.save_settings(home.settings.model_copy(update={"lock_wait_s": seconds}))
    return Home(home.root)


def _contract(world: World, leaf_id: str) -> LeafContract:
    return LeafContract.model_validate({
        "leaf_id": leaf_id, "kind": "extract", "inputs": {"source_id": NOTE_ID}, "base_revision": world.tip(),
        "may_write": [rule.model_dump() for rule in default_write_rules("extract")], "check": "extract",
        "created_at": NOW, "created_by": "planner", "expires_at": NOW + timedelta(days=1)})


def test_a_writer_waits_for_a_live_holder_only_up_to_the_bound_then_answers_busy(world: World) -> None:
    home = _short_wait(world.home)
    tip = world.tip()
    with lock_held(home.lock_path(SLUG)):
        started = time.monotonic()
        with pytest.raises(BusyError, match="writer lock is held by another live process"):
            add_leaf(home, SLUG, _contract(world, "extract-1"), now=NOW, actor="planner")
        waited = time.monotonic() - started
        assert waited >= 1.0  # it did wait the bound: a short hold is not answered busy
        assert home.project(SLUG).tip() == tip and not home.lock_path(SLUG).with_name(f"{SLUG}.writing").exists()
    add_leaf(home, SLUG, _contract(world, "extract-1"), now=NOW, actor="planner")  # control: the holder let go
    assert home.project(SLUG).tip() != tip


def test_the_default_bound_is_a_documented_constant_and_busy_has_its_own_answers() -> None:
    assert Settings().lock_wait_s == LOCK_WAIT_S == 60.0
    assert exit_code_of(BusyError("held")) == EXIT_BUSY == 9 != EXIT_RETRY
    assert isinstance(BusyError("held"), RetryableError)  # retryable: nothing was done
    readme = (ROOT / "README.md").read_text()
    assert "| 9 | busy:" in readme and "`lock_wait_s`" in readme


def test_rw_answers_busy_with_its_own_exit_code_while_a_live_process_holds_the_project(world: World) -> None:
    home = _short_wait(world.home)
    token = home.identities.add("ericxtang", "ericxtang", "human", NOW)
    add = ("leaf", "add", SLUG, "--kind", "extract", "--source", NOTE_ID)
    tip = world.tip()
    with lock_held(home.lock_path(SLUG)):
        done = _rw(home.root, *add, token=token)
        assert done.returncode == EXIT_BUSY, done.stderr
        assert "held by another live process" in done.stderr and "Traceback" not in done.stderr
        assert home.project(SLUG).tip() == tip
    done = _rw(home.root, *add, token=token)  # control
    assert done.returncode == 0, done.stderr


def test_the_service_answers_busy_503_while_a_live_process_holds_the_project(world: World) -> None:
    home = _short_wait(world.home)
    live_leaf(home, "extract-1")
    submission = world.extract("extract-1")
    tip = world.tip()
    server = start(home.root)
    try:
        with lock_held(home.lock_path(SLUG)):
            reply = submit_once(server.client(world.agent.token), submission, key="busy-attempt-1")
            assert (reply.status, reply.error_code) == (503, "busy"), reply.body
            assert reply.headers.get("retry-after") == "5"
            assert home.project(SLUG).tip() == tip
        reply = submit_once(server.client(world.agent.token), submission, key="busy-attempt-1")  # control: the same key
        assert reply.status == 201 and reply.body["verdict"]["outcome"] == "accepted", reply.body
    finally:
        server.stop()
