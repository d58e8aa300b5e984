"""Cost an agent did not disclose stays unknown wherever it is reported: the use-score summary
(`rw scores`), the five components of scores/resolution.json, and the evaluation's averages,
which leave it out and count it instead of reading it as 0."""

from __future__ import annotations

import json

from tests.support.eval import row
from verifier.evaluation.metrics import cost_pairs
from verifier.formats.usescores import UseSummary
from verifier.scoring.resolution import activity_from_use_summary, components, score_resolutions
from verifier.scoring.use import ScoreBook


def summary_after(submissions: list[tuple[str, int, int | None, float | None]]) -> dict[str, dict[str, object]]:
    book = ScoreBook(lambda _path: None)
    for operator, objects, tokens, usd in submissions:
        book.record_submission(operator, objects=objects, tokens=tokens, usd=usd)
    operators: dict[str, dict[str, object]] = json.loads(book.writes()["scores/use.json"] or b"")["operators"]
    return operators


def test_undisclosed_cost_is_null_and_counted_not_zero() -> None:
    operators = summary_after([("quiet", 3, None, None), ("mixed", 2, 100, 0.5), ("mixed", 6, None, None)])
    assert operators["quiet"]["usd"] is None and operators["quiet"]["tokens"] is None
    assert operators["quiet"]["usd_per_accepted_object"] is None and operators["quiet"]["usd_undisclosed"] == 1
    # The average rests on the disclosed leaf alone: 0.5 usd over its 2 objects, not over all 8.
    assert operators["mixed"]["usd"] == 0.5 and operators["mixed"]["usd_objects"] == 2
    assert operators["mixed"]["usd_per_accepted_object"] == 0.25 and operators["mixed"]["usd_undisclosed"] == 1
    assert operators["mixed"]["accepted_objects"] == 8


def test_the_components_divide_by_the_disclosed_objects_only() -> None:
    operators = summary_after([("quiet", 3, None, None), ("mixed", 2, 100, 0.5), ("mixed", 6, None, None)])
    summary = UseSummary.parse(json.dumps({"operators": operators}).encode(), "scores/use.json")
    rows = {str(r["operator"]): r for r in components(score_resolutions([], []), activity_from_use_summary(summary))
            if isinstance(r, dict)}
    assert rows["quiet"]["cost_per_accepted_object"] == {"usd": None, "tokens": None}
    assert rows["mixed"]["cost_per_accepted_object"] == {"usd": 0.25, "tokens": 50.0}


def test_a_disclosed_zero_is_a_cost_of_zero() -> None:
    operators = summary_after([("free", 4, 0, 0.0)])
    assert operators["free"]["usd"] == 0.0 and operators["free"]["usd_per_accepted_object"] == 0.0


def test_the_evaluation_leaves_undisclosed_cost_out_and_counts_it() -> None:
    attempts = [row("p", 1, 0, "submit", kind="extract", usd=None, objects=("fnd_1",)),
                row("p", 2, 0, "submit", kind="extract", usd=0.2, objects=("fnd_2", "fnd_3")),
                row("p", 3, 0, "submit", "rejected", kind="extract", usd=0.1)]
    pairs, excluded = cost_pairs(attempts)
    assert sorted(pairs) == [(0.1, 0.0), (0.2, 2.0)] and excluded == 1
