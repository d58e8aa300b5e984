"""The agent's trace recorder: every secret family stripped with the verifier's own scanner (and the
stripped bundle passes the verifier's scan), tool output truncated to keep the bundle under 20 MB
with every reasoning event intact, and the levels L1-L3 as the verifier measures them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.secret_cases import CASES, Case
from verifier.agentkit.tracing import KEYWORD_KIND, TraceLog, marker, strip_secrets
from verifier.agentkit.workspace import creation_patch
from verifier.constants import MAX_BUNDLE_BYTES, MAX_TOOL_EVENT_CHARS
from verifier.errors import Rejected
from verifier.pipeline.trace import inspect_bundle
from verifier.secrets import scan_bytes
from verifier.secrets.keywords import KIND

TS = "2026-11-30T12:00:00Z"
PATCH = creation_patch({"findings/ab/fnd_abababababababab.yaml": b"finding_id: fnd_abababababababab\n"})
MANIFEST = {"leaf_id": "extract-1", "agent": "agent-a", "operator": "op-a", "base_revision": "a" * 40,
            "skill_version": "sk-0123456789ab"}


def minimal(log: TraceLog, *, reasoning: str | None = "Looked at the source.") -> None:
    log.add(TS, "tool_call", {"tool": "rw source text"})
    log.add(TS, "tool_result", "the text")
    if reasoning is not None:
        log.add(TS, "reasoning", reasoning)
    log.add(TS, "final", "Done.")


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_each_secret_family_is_replaced_by_a_marker_naming_its_detector(case: Case, tmp_path: Path) -> None:
    assert scan_bytes(case.context.encode(), name="x"), "the sample must be a secret the scanner finds"
    clean, kinds = strip_secrets(f"tool said: {case.context} and went on")
    assert case.value not in clean
    assert case.kind in kinds and marker(case.kind) in clean
    assert clean.startswith("tool said: ")

    log = TraceLog(tmp_path / "trace")
    log.add(TS, "tool_call", {"tool": "env", "args": [case.context]})
    log.add(TS, "tool_result", {"stdout": case.context, case.context: "as a key too"})
    log.add(TS, "reasoning", f"I saw {case.context} in the output")
    log.add(TS, "final", "Done.")
    bundle = log.bundle(MANIFEST, PATCH)
    record = inspect_bundle(bundle, PATCH)  # the verifier's ingest, secret scan included
    assert record.level == "L2"
    assert case.value.encode() not in bundle["events.jsonl"]


def test_secrets_in_the_context_are_stripped_too(tmp_path: Path) -> None:
    case = CASES[0]
    log = TraceLog(tmp_path / "trace", level="L3")
    minimal(log)
    assert log.set_context(f"# Context\n{case.context}\n") == [case.kind]
    bundle = log.bundle(MANIFEST, PATCH)
    assert inspect_bundle(bundle, PATCH).level == "L3"
    assert case.value.encode() not in bundle["context.md"]


def test_a_50_mb_tool_result_leaves_the_bundle_under_20_mb_and_reasoning_whole(tmp_path: Path) -> None:
    log = TraceLog(tmp_path / "trace")
    long_reasoning = "Because the note counts teams, not contracts, I weigh it as one interview set. " * 40_000
    log.add(TS, "reasoning", long_reasoning)  # about 3 MB: never cut
    log.add(TS, "tool_call", {"tool": "curl", "args": ["https://example.org/huge"]})
    log.add(TS, "tool_result", "x" * (50 * 1024 * 1024))
    for number in range(12):  # and many results near the per-event cap, to make the bundle cut them
        log.add(TS, "tool_result", {"page": number, "body": "y" * MAX_TOOL_EVENT_CHARS})
        log.add(TS, "reasoning", f"Step {number}: the page says nothing new.")
    log.add(TS, "final", "Done.")
    bundle = log.bundle(MANIFEST, PATCH)
    assert sum(len(data) for data in bundle.values()) < MAX_BUNDLE_BYTES
    events = [json.loads(line) for line in bundle["events.jsonl"].splitlines()]
    reasoning = [event["content"] for event in events if event["type"] == "reasoning"]
    assert reasoning == [long_reasoning] + [f"Step {n}: the page says nothing new." for n in range(12)]
    assert "truncated by rw" in events[2]["content"]
    assert inspect_bundle(bundle, PATCH).level == "L2"


def test_levels(tmp_path: Path) -> None:
    l1 = TraceLog(tmp_path / "l1", level="L1")
    minimal(l1, reasoning="Not kept at L1.")
    bundle = l1.bundle(MANIFEST, PATCH)
    assert b"Not kept at L1." not in bundle["events.jsonl"]
    assert json.loads(bundle["manifest.json"])["level"] == "L1"
    assert inspect_bundle(bundle, PATCH).level == "L1"

    l2 = TraceLog(tmp_path / "l2")
    minimal(l2)
    assert inspect_bundle(l2.bundle(MANIFEST, PATCH), PATCH).level == "L2"
    l2.set_context("the full context")
    assert "context.md" not in l2.bundle(MANIFEST, PATCH)  # sent at L3 only

    l3 = TraceLog(tmp_path / "l3", level="L3")
    minimal(l3)
    with pytest.raises(Rejected) as missing:  # L3 declared without the starting context
        inspect_bundle(l3.bundle(MANIFEST, PATCH), PATCH)
    assert missing.value.headline.code == "trace_level"
    l3.set_context("the full context")
    assert inspect_bundle(l3.bundle(MANIFEST, PATCH), PATCH).level == "L3"


def test_submit_ends_the_trace_with_a_final_event_when_none_was_recorded(tmp_path: Path) -> None:
    log = TraceLog(tmp_path / "trace")
    log.add(TS, "tool_call", {"tool": "rw work"})
    log.add(TS, "tool_result", "claimed")
    log.add(TS, "reasoning", "Three sentences carry numbers.")
    bundle = log.bundle(MANIFEST, PATCH, final=(TS, "Submitted."))
    assert inspect_bundle(bundle, PATCH).level == "L2"
    with pytest.raises(Rejected):
        inspect_bundle(log.bundle(MANIFEST, PATCH), PATCH)


def test_unknown_event_types_and_levels_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="event type"):
        TraceLog(tmp_path / "t").add(TS, "thought", "x")
    with pytest.raises(ValueError, match="trace level"):
        TraceLog(tmp_path / "t", level="L4").add(TS, "final", "x")


def test_event_times_never_go_backwards(tmp_path: Path) -> None:
    log = TraceLog(tmp_path / "trace")
    log.add("2026-11-30T12:00:00Z", "tool_call", {"tool": "a"})
    log.add("2026-11-30T11:00:00+00:00", "tool_result", "an earlier clock")
    log.add(TS, "reasoning", "r")
    log.add("2026-11-30T12:00:05Z", "final", "f")
    bundle = log.bundle(MANIFEST, PATCH)
    assert inspect_bundle(bundle, PATCH).level == "L2"
    times = [json.loads(line)["ts"] for line in bundle["events.jsonl"].splitlines()]
    assert times[1] == "2026-11-30T12:00:00Z" and times[3] == "2026-11-30T12:00:05Z"


def test_the_recorder_names_the_keyword_detector_as_the_scanner_does() -> None:
    assert KEYWORD_KIND == KIND
