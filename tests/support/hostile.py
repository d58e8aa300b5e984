"""Shared helpers for the hardening tests: a refusal leaves the project as it was, bar one row."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from tests.support.world import NOW, SLUG, World
from verifier.agentkit.bundle import TraceRecorder
from verifier.pipeline.ledger import read_chain
from verifier.pipeline.submit import Submission
from verifier.pipeline.verdict import Verdict

# Shaped like an AWS access key id (AKIA + 16 of A-Z2-7), made up for these tests.
FAKE_AWS_KEY = "AKIAZ3MBQ4WX7RTY2PLE"


Event = tuple[str, str | dict[str, Any]]


def traced_submission(world: World, leaf_id: str, patch: bytes, *, events: list[Event] | None = None,
                      token: str | None = None) -> Submission:
    """An L1 submission of `patch` by agent-a, with extra trace events appended before `final`."""
    trace = TraceRecorder()
    trace.add(NOW - timedelta(seconds=5), "tool_call", {"tool": "git diff"})
    trace.add(NOW - timedelta(seconds=4), "tool_result", "done")
    for kind, content in events or []:
        trace.add(NOW - timedelta(seconds=3), kind, content)
    trace.add(NOW - timedelta(seconds=2), "final", "Submitting the patch.")
    bundle = trace.bundle(leaf_id=leaf_id, agent="agent-a", operator="op-a", base_revision=world.tip(),
                          patch=patch, level="L1")
    return Submission(SLUG, leaf_id, patch, bundle, token or world.agent.token)


def hostile_submission(world: World, leaf_id: str, patch: bytes) -> Submission:
    """An L1 submission of `patch` by agent-a with a three-event trace (no extra events).

    Unlike `traced_submission(world, leaf_id, patch)`, its `final` event is at NOW - 3s."""
    trace = TraceRecorder()
    trace.add(NOW - timedelta(seconds=5), "tool_call", {"tool": "git diff"})
    trace.add(NOW - timedelta(seconds=4), "tool_result", "done")
    trace.add(NOW - timedelta(seconds=3), "final", "Submitting the patch.")
    bundle = trace.bundle(leaf_id=leaf_id, agent="agent-a", operator="op-a", base_revision=world.tip(),
                          patch=patch, level="L1")
    return Submission(SLUG, leaf_id, patch, bundle, world.agent.token)


def assert_refused_cleanly(world: World, submission: Submission, code: str, *, purged: bool = False) -> Verdict:
    """The submission is refused with `code`; the branch gained only the refusal's ledger row.

    purged: nothing of the attempt's trace was stored either (a secret refusal).
    """
    tip_before = world.tip()
    rows_before = [line for line, _ in read_chain(world.repo.view(tip_before))]
    objects_before = world.objects()
    traces_before = sorted(path.name for path in world.home.root.rglob("trc_*"))
    verdict = world.submit(submission)
    assert verdict.outcome == "rejected", verdict.line()
    assert verdict.rejections[0].code == code, verdict.line()
    tip_after = world.tip()
    assert [str(p.id) for p in world.repo.commit(tip_after).parents] == [tip_before]
    assert world.repo.changed_paths(tip_before, tip_after) == ["ledger/000000.jsonl"]
    rows_after = [line for line, _ in read_chain(world.repo.view(tip_after))]
    assert rows_after[:-1] == rows_before and len(rows_after) == len(rows_before) + 1
    ledger_tree = world.repo.repo[tip_after].tree
    expected_new = {tip_after, str(ledger_tree.id), str(ledger_tree["ledger"].id),
                    str(ledger_tree["ledger/000000.jsonl"].id)}
    assert world.objects() - objects_before == expected_new
    if purged:
        assert sorted(path.name for path in world.home.root.rglob("trc_*")) == traces_before
    return verdict
