"""Trace ingest (design §3.10, §13): missing and sub-L1 traces are refused naming the part, an L1
trace is accepted, a planted secret is refused and nothing of the bundle is kept."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from tests.support.world import NOW, SLUG, World
from verifier.agentkit.bundle import TraceRecorder
from verifier.constants import MAX_BUNDLE_BYTES
from verifier.errors import Rejected
from verifier.pipeline.submit import Submission
from verifier.pipeline.trace import inspect_bundle

PATCH = b"diff --git a/x b/x\n"
BASE = "a" * 40


def bundle(*kinds: str, level: str = "L1", patch: bytes = PATCH, context: str | None = None,
           extra: str = "") -> dict[str, bytes]:
    trace = TraceRecorder()
    for index, kind in enumerate(kinds):
        trace.add(NOW + timedelta(seconds=index), kind, f"{kind} {index} {extra}")
    return trace.bundle(leaf_id="extract-1", agent="agent-a", operator="op-a", base_revision=BASE,
                        patch=patch, level=level, context=context)


def code_of(files: dict[str, bytes], patch: bytes = PATCH) -> tuple[str, str]:
    with pytest.raises(Rejected) as info:
        inspect_bundle(files, patch)
    return info.value.headline.code, info.value.headline.render()


def test_l1_l2_l3_levels() -> None:
    assert inspect_bundle(bundle("tool_call", "tool_result", "final"), PATCH).level == "L1"
    assert inspect_bundle(bundle("reasoning", "tool_call", "tool_result", "final", level="L2"), PATCH).level == "L2"
    l3 = bundle("reasoning", "tool_call", "tool_result", "final", level="L3", context="the leaf and guide")
    assert inspect_bundle(l3, PATCH).level == "L3"


def test_no_trace_at_all() -> None:
    code, message = code_of({})
    assert code == "trace_missing" and "manifest.json" in message


@pytest.mark.parametrize(("kinds", "missing"), [
    (("tool_result", "final"), "tool_call"),
    (("tool_call", "final"), "tool_result"),
    (("tool_call", "tool_result"), "final"),
])
def test_below_l1_names_the_missing_part(kinds: tuple[str, ...], missing: str) -> None:
    code, message = code_of(bundle(*kinds))
    assert code == "trace_below_l1" and missing in message


def test_declared_level_must_be_met() -> None:
    code, message = code_of(bundle("tool_call", "tool_result", "final", level="L2"))
    assert code == "trace_level" and "reasoning" in message


def test_patch_must_be_byte_identical() -> None:
    code, _ = code_of(bundle("tool_call", "tool_result", "final"), patch=PATCH + b" ")
    assert code == "trace_patch_mismatch"


def test_oversize_bundle() -> None:
    files = bundle("tool_call", "tool_result", "final")
    files["events.jsonl"] += b" " * MAX_BUNDLE_BYTES
    assert code_of(files)[0] == "trace_oversize"


def test_unknown_file_and_bad_event() -> None:
    assert code_of({**bundle("tool_call", "tool_result", "final"), "evil.sh": b"x"})[0] == "trace_unknown_file"
    files = bundle("tool_call", "tool_result", "final")
    files["events.jsonl"] += b'{"ts": "2026-01-01T00:00:00Z", "type": "thought", "content": "x"}\n'
    code, message = code_of(files)
    assert code == "trace_events" and "events.jsonl:4" in message


def test_trace_id_is_content_addressed() -> None:
    files = bundle("tool_call", "tool_result", "final")
    first, second = inspect_bundle(files, PATCH), inspect_bundle(dict(reversed(files.items())), PATCH)
    assert first.trace_id == second.trace_id and first.trace_id.startswith("trc_") and len(first.digest) == 64


AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLX"


def test_planted_secret_is_rejected_and_purged(world: World) -> None:
    world.leaf("extract-1")
    good = world.extract("extract-1")
    events = good.bundle["events.jsonl"] + json.dumps(
        {"ts": "2026-11-30T12:00:00Z", "type": "tool_result", "content": f"aws_access_key_id={AWS_KEY}"}
    ).encode() + b"\n"
    leaky = {**good.bundle, "events.jsonl": events}
    traces = world.home.root / "traces"
    traces_before = sorted(p.name for p in traces.glob("*"))
    verdict = world.submit(Submission(SLUG, "extract-1", good.patch, leaky, good.token))
    assert verdict.outcome == "rejected"
    assert verdict.rejections[0].code == "secret_in_trace"
    assert AWS_KEY not in verdict.line() and AWS_KEY not in json.dumps(verdict.to_json())
    traces_after = sorted(p.name for p in traces.glob("*"))
    assert traces_after == traces_before
    assert verdict.trace_id is None
    ledger = b"".join(world.repo.view(world.tip()).read(f"ledger/{n}") or b""
                      for n in world.repo.view(world.tip()).list_dir("ledger"))
    assert AWS_KEY.encode() not in ledger


def test_missing_trace_is_rejected_before_patch_work(world: World) -> None:
    world.leaf("extract-1")
    good = world.extract("extract-1")
    verdict = world.submit(Submission(SLUG, "extract-1", good.patch, {}, good.token))
    assert verdict.rejections[0].code == "trace_missing"


def test_accepted_submission_stores_its_trace(world: World) -> None:
    world.leaf("extract-1")
    good = world.extract("extract-1")
    verdict = world.submit(good)
    assert verdict.outcome == "accepted"
    assert verdict.trace_id is not None
    assert world.home.traces.read(verdict.trace_id) == good.bundle


def test_l1_trace_is_accepted_end_to_end(world: World) -> None:
    world.leaf("extract-1")
    submission = world.creation("extract-1", world.findings("extract-1"), level="L1")
    verdict = world.submit(submission)
    assert verdict.outcome == "accepted", verdict.line()
