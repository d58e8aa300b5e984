"""The Planner with a configured model: the model makes only the judgement calls (gap order, leaf
selection, goal, reasons); an answer that breaks the rules, or a model that fails, is logged in the plan and the
deterministic plan is used. The model is a real command (CommandBackend), reading the request."""

from __future__ import annotations

import sys
from dataclasses import replace

import pytest

from tests.support.world import NOW
from verifier.model.adapter import CommandBackend
from verifier.roles.planjudge import judge
from verifier.roles.planning import HypothesisFacts, ProjectState, plan

STATE = ProjectState(
    slug="demo", tip="b" * 40, steward="stew", hold_plans=False, leaves_max=2,
    hypotheses=[HypothesisFacts("H1", 1, "active", True, challenged=True)], sources=[], open_leaves=[],
    gaps=[("H1", "pricing data"), ("H1", "a survey of buyers"), (None, "regulator filings")],
)


def model(answer_code: str) -> CommandBackend:
    """A model command: reads the request JSON on stdin as `request`, prints what `answer_code` builds."""
    script = f"import json, sys; request = json.load(sys.stdin); print(json.dumps({answer_code}))"
    return CommandBackend((sys.executable, "-c", script), timeout_s=30)


def test_a_valid_judgement_orders_the_gaps_and_words_the_goal() -> None:
    deterministic = plan(STATE, NOW)
    assert [c.inputs.gap for c in deterministic.leaves] == ["pricing data", "a survey of buyers"]
    backend = model('{"gap_order": list(reversed(request["gaps"])), "goal": "Find who regulates pricing.", '
                    '"reasons": {request["leaves"][0]["leaf_id"]: "Filings are public and dated."}}')
    result = judge(STATE, NOW, backend)
    assert [c.inputs.gap for c in result.leaves] == ["regulator filings", "a survey of buyers"]
    assert result.goal == "Find who regulates pricing."
    assert any("(the model's reason)" not in d and "Scout order" in d for d in result.decisions)
    assert any(d.startswith("Judgement calls by the configured command model") for d in result.decisions)
    assert len(result.leaves) <= STATE.leaves_max


@pytest.mark.parametrize(("answer_code", "why"), [
    ('"I think pricing first"', "not the judgement object"),
    ('{"gap_order": request["gaps"][:2]}', "not a reordering of exactly the gaps"),
    ('{"gap_order": request["gaps"] + ["fetch https://evil.example"]}', "not a reordering"),
    ('{"reasons": {"extract-made-up": "trust me"}}', "not a leaf of this plan"),
    ('{"goal": "two\\nlines"}', "not the judgement object"),
    ('{"goal": "x", "leaves": []}', "not the judgement object"),
])
def test_a_bad_answer_is_logged_and_the_deterministic_plan_stands(answer_code: str, why: str) -> None:
    result = judge(STATE, NOW, model(answer_code))
    deterministic = plan(STATE, NOW)
    assert [c.leaf_id for c in result.leaves] == [c.leaf_id for c in deterministic.leaves]
    assert result.goal == deterministic.goal
    logged = [d for d in result.decisions if d.startswith("The model's judgement was not used")]
    assert len(logged) == 1 and why in logged[0]


def test_a_failing_model_is_logged_too() -> None:
    result = judge(STATE, NOW, CommandBackend((sys.executable, "-c", "import sys; sys.exit(3)"), timeout_s=30))
    assert any(d.startswith("The model's judgement was not used") for d in result.decisions)
    assert [c.leaf_id for c in result.leaves] == [c.leaf_id for c in plan(STATE, NOW).leaves]


def test_nothing_to_plan_asks_nothing() -> None:
    quiet = replace(STATE, gaps=[])
    never = CommandBackend((sys.executable, "-c", "raise SystemExit('must not be called')"), timeout_s=30)
    assert judge(quiet, NOW, never).decisions == plan(quiet, NOW).decisions
