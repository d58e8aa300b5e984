"""budget_per_loop held to the disclosed costs (issue 24 point 2), pure: the loop's spending is
its window's attempts' disclosures; a loop over its usd (or tokens) budget plans no further
leaves and says so; a loop part-spent plans what the rest pays for; undisclosed costs are never
made up."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from tests.support.budget import NOW, attempt, project_state
from verifier.formats.project import Budget
from verifier.roles.budget import LoopSpend, budget_room, loop_spend, worker_stop
from verifier.roles.planning import plan

LOOP = timedelta(minutes=20)


def test_the_loops_spending_is_its_windows_leaf_attempts_of_any_outcome() -> None:
    rows = [attempt(1, NOW - timedelta(minutes=30), usd=9.0),  # an earlier loop
            attempt(2, NOW - timedelta(minutes=10), usd=1.5, tokens=1000, outcome="rejected"),
            attempt(3, NOW - timedelta(minutes=5), usd=2.0, outcome="crash"),
            attempt(4, NOW - timedelta(minutes=4)),  # disclosed nothing
            attempt(5, NOW - timedelta(minutes=3), usd=5.0, action="plan", leaf_id=None)]
    assert loop_spend(rows, NOW, LOOP) == LoopSpend(attempts=3, tokens=1000, tokens_attempts=1, usd=3.5,
                                                    usd_attempts=2)


def test_a_loop_over_its_usd_budget_has_no_room_and_says_why() -> None:
    room = budget_room(Budget(usd=3.0), LoopSpend(attempts=3, usd=3.5, usd_attempts=2), "20m")
    assert room.spent and room.room == 0
    assert room.note.startswith("budget_per_loop.usd is 3 and 3.5 usd") and "no further leaves" in room.note
    assert "1 disclosed nothing" in room.note


def test_a_loop_over_its_token_budget_has_no_room() -> None:
    assert budget_room(Budget(tokens=500), LoopSpend(attempts=1, tokens=900, tokens_attempts=1), "20m").spent


def test_a_part_spent_loop_has_room_for_what_the_rest_pays_for_at_its_average() -> None:
    room = budget_room(Budget(usd=10.0), LoopSpend(attempts=2, usd=4.0, usd_attempts=2), "20m")
    assert room.room == 3  # 6 usd left at 2 usd an attempt
    assert "pays for about 3 more leaves" in room.note


def test_undisclosed_costs_set_no_limit_beyond_leaves_max() -> None:
    assert budget_room(Budget(usd=0.01), LoopSpend(attempts=7), "20m").room is None


def test_a_loop_over_its_usd_budget_plans_no_further_leaves_and_says_so() -> None:
    room = budget_room(Budget(usd=3.0), LoopSpend(attempts=2, usd=3.5, usd_attempts=2), "20m")
    result = plan(replace(project_state(), cost_room=room.room, budget_note=room.note), NOW)
    assert result.leaves == []
    budget = [d for d in result.decisions if d.startswith("Budget: ")]
    assert len(budget) == 1 and "no further leaves this loop" in budget[0] and "left out" in budget[0]


def test_a_part_spent_loop_plans_only_the_leaves_its_budget_pays_for() -> None:
    full = plan(project_state(), NOW)
    assert len(full.leaves) > 2
    result = plan(replace(project_state(), cost_room=2, budget_note="6 usd left pays for about 2 more leaves"), NOW)
    assert len(result.leaves) == 2
    assert [c.leaf_id for c in result.leaves] == [c.leaf_id for c in full.leaves[:2]]  # the same priority
    assert any(d.startswith("Budget: 6 usd left") and f"left out {len(full.leaves) - 2} leaves" in d
               for d in result.decisions)


def test_a_runner_stops_at_a_spent_budget_or_at_leaves_max_attempts_in_the_loop() -> None:
    assert worker_stop(Budget(usd=1.0), LoopSpend(attempts=1, usd=2.0, usd_attempts=1), "20m") is not None
    stopped = worker_stop(Budget(leaves_max=3), LoopSpend(attempts=3), "20m")
    assert stopped is not None and stopped.startswith("budget_per_loop.leaves_max is 3 and 3 leaf attempts")
    assert worker_stop(Budget(leaves_max=3), LoopSpend(attempts=2), "20m") is None
