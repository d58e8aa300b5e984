"""An agent's submission refused before its leaf was read (its trace bundle refused at step 2)
still counts among its kind's attempts: its ledger row names the leaf's kind, and `rw eval` puts
a row written without one (by an earlier verifier) under its leaf's kind, read from the contract,
else the leaf's `leaf` row, else `unknown` (docs/eval.md)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from tests.support.world import NOW, SLUG, World
from verifier.evaluation.history import _fill_kinds, read_history
from verifier.evaluation.rows import Attempt
from verifier.pipeline.ledger import read_chain
from verifier.state.layout import leaf_path
from verifier.state.view import Overlay


def test_a_refused_trace_lands_its_row_under_the_leafs_kind_and_counts_as_an_attempt(world: World) -> None:
    world.leaf("extract-1")
    submission = world.extract("extract-1")
    events = submission.bundle["events.jsonl"] + b'{"ts": "2026-01-01T00:00:00Z", "type": "thought", "content": "x"}\n'
    refused = world.submit(replace(submission, bundle={**submission.bundle, "events.jsonl": events}))
    assert refused.outcome == "rejected" and refused.rejections[0].code == "trace_events"
    row = [row for _, row in read_chain(world.repo.view(world.tip()))][-1]
    assert (row.action, row.outcome, row.kind) == ("submit", "rejected", "extract")
    assert world.submit(world.extract("extract-1"), NOW + timedelta(minutes=1)).outcome == "accepted"
    counted = [r for r in read_history(world.repo.view(world.tip()), SLUG).rows if r.is_agent_submission]
    assert [(r.kind, r.outcome) for r in counted] == [("extract", "rejected"), ("extract", "accepted")]


def test_a_row_without_a_kind_takes_its_leafs_from_the_contract_then_the_leaf_row_then_unknown(world: World) -> None:
    def submit(seq: int, leaf_id: str) -> Attempt:
        return Attempt(SLUG, seq, NOW, "submit", "rejected", "trace_events", leaf_id, None, "agent-a", "agent")

    attempts = [Attempt(SLUG, 0, NOW, "leaf", "accepted", leaf_id="link-9", kind="link", actor="planner",
                        actor_type="planner"),
                submit(1, "extract-1"), submit(2, "link-9"), submit(3, "gone-1"), submit(4, "bad-1")]
    world.leaf("extract-1")
    view = Overlay(world.repo.view(world.tip()), {leaf_path("bad-1"): b"not a contract"})
    assert all(not row.is_agent_submission for row in attempts[1:])
    _fill_kinds(view, attempts, [1, 2, 3, 4])
    assert [(row.kind, row.is_agent_submission) for row in attempts[1:]] == [
        ("extract", True), ("link", True), ("unknown", True), ("unknown", True)]
