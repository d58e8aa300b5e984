"""The Planner reads all of design §5.1: the judgement request carries PROJECT.md's free text and
the latest report (bounded), and the model may choose and order the rules' candidate leaves, never
outside them. The model is the `recorded` backend: each answer is stored under the sha256 of the
exact request the wake sends, so a wake that sent anything else would find no answer."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from tests.support.planjudge import REPORT_TEXT, home_with_reports, record, wake_request
from tests.support.world import NOW, SLUG
from verifier.constants import PLAN_PROJECT_TEXT_MAX_CHARS, PLAN_REPORT_MAX_CHARS
from verifier.formats.document import Report, parse_report
from verifier.model.adapter import RecordedBackend
from verifier.roles.planjudge import context_of, select_leaves
from verifier.roles.planner import local_commons, wake
from verifier.roles.planning import HypothesisFacts, ProjectState, plan
from verifier.state.layout import leaf_path

STATE = ProjectState(
    slug="demo", tip="b" * 40, steward="stew", hold_plans=False, leaves_max=3,
    hypotheses=[HypothesisFacts("H1", 1, "active", True, challenged=True)], sources=[], open_leaves=[],
    gaps=[("H1", "pricing data"), ("H1", "a survey of buyers"), (None, "regulator filings")],
)


def test_a_wake_sends_the_report_and_the_free_text_and_the_models_choice_lands(tmp_path: Path) -> None:
    home = home_with_reports(tmp_path)
    commons = local_commons(home)
    request = wake_request(home, commons)
    sent = json.loads(request)
    assert sent["latest_report"]["report_id"] == "r-latest" and REPORT_TEXT in sent["latest_report"]["text"]
    assert "who pays for world-model technology first" in sent["project_text"]["text"]
    assert "Out of scope" in sent["project_text"]["text"] and not sent["project_text"]["cut"]
    candidates = [leaf["leaf_id"] for leaf in sent["leaves"]]
    assert len(candidates) >= 3
    chosen = [candidates[-1], candidates[0]]  # a subset, in another order
    folder = tmp_path / "recorded"
    record(folder, request, {"leaves": chosen})
    result = wake(home, SLUG, NOW, commons=commons, model=RecordedBackend(folder))
    assert result.plan is not None and result.landed is not None
    assert [c.leaf_id for c in result.plan.leaves] == chosen
    assert any(d.startswith("Judgement calls by the configured recorded model") for d in result.plan.decisions)
    assert any(d.startswith("Leaves: the configured model's selection") for d in result.plan.decisions)
    view = home.project(SLUG).view(result.landed.tip)
    assert all(view.read(leaf_path(i)) is not None for i in chosen)
    assert all(view.read(leaf_path(i)) is None for i in candidates if i not in chosen)  # left for a later wake


def test_an_answer_naming_a_leaf_outside_the_candidates_is_refused_and_the_rules_plan_lands(tmp_path: Path) -> None:
    home = home_with_reports(tmp_path)
    commons = local_commons(home)
    request = wake_request(home, commons)
    candidates = [leaf["leaf_id"] for leaf in json.loads(request)["leaves"]]
    folder = tmp_path / "recorded"
    record(folder, request, {"leaves": [candidates[1], "scout-0123456789ab"]})
    result = wake(home, SLUG, NOW, commons=commons, model=RecordedBackend(folder))
    assert result.plan is not None and result.landed is not None
    assert [c.leaf_id for c in result.plan.leaves] == candidates
    refused = [d for d in result.plan.decisions if d.startswith("The model's leaf selection was refused")]
    assert len(refused) == 1 and "not among the rules' candidates" in refused[0]
    assert home.project(SLUG).view(result.landed.tip).read(leaf_path("scout-0123456789ab")) is None


def test_with_no_model_the_wake_lands_the_rules_plan_unchanged(tmp_path: Path) -> None:
    home = home_with_reports(tmp_path)
    commons = local_commons(home)
    rules = [leaf["leaf_id"] for leaf in json.loads(wake_request(home, commons))["leaves"]]
    result = wake(home, SLUG, NOW, commons=commons)
    assert result.plan is not None and [c.leaf_id for c in result.plan.leaves] == rules
    assert not any("model" in d for d in result.plan.decisions)


@pytest.mark.parametrize(("chosen", "why"), [
    (["extract-made-up"], "not among the rules' candidates"),
    ([0, 0], "more than once"),
    ([0, 1, 2, 0], "more than once"),
])
def test_a_selection_outside_the_rules_is_refused_whole(chosen: list[object], why: str) -> None:
    candidates = plan(STATE, NOW).leaves
    ids = [candidates[c].leaf_id if isinstance(c, int) else str(c) for c in chosen]
    leaves, decision = select_leaves(candidates, ids, STATE.wake_max)
    assert leaves == candidates
    assert decision.startswith("The model's leaf selection was refused") and why in decision


def test_a_selection_over_the_budget_is_refused_and_an_approved_leaf_is_kept() -> None:
    candidates = plan(STATE, NOW).leaves
    ids = [c.leaf_id for c in candidates]
    leaves, decision = select_leaves(candidates, ids, budget=len(ids) - 1)
    assert leaves == candidates and "more than this wake's budget" in decision
    leaves, _decision = select_leaves(candidates, [ids[1]], budget=len(ids), keep=frozenset({ids[0]}))
    assert [c.leaf_id for c in leaves] == [ids[1], ids[0]]


def test_the_context_is_bounded_and_reads_the_latest_report() -> None:
    def report(report_id: str, day: int, body: str) -> tuple[str, tuple[Report, str]]:
        data = (f"---\nreport_id: {report_id}\ntitle: T\nauthor: alice\n"
                f"created_at: '{(NOW - timedelta(days=day)).strftime('%Y-%m-%dT%H:%M:%SZ')}'\n---\n{body}\n")
        return report_id, parse_report(data, f"reports/{report_id}.md")

    reports = dict([report("r-new", 1, "x" * (PLAN_REPORT_MAX_CHARS + 50)), report("r-old", 9, "old")])
    context = context_of("y" * (PLAN_PROJECT_TEXT_MAX_CHARS + 1), reports)
    assert context.report_id == "r-new" and context.report.cut and len(context.report.text) == PLAN_REPORT_MAX_CHARS
    assert context.project_text.cut and len(context.project_text.text) == PLAN_PROJECT_TEXT_MAX_CHARS
    assert context_of("short", {}).to_json() == {"project_text": {"text": "short", "cut": False},
                                                  "latest_report": None}
