"""Golden tests of every evaluation metric (design §1, §12) on the plain fixture histories of
tests/support/eval.py, with the numbers worked out by hand; the stale-validation flag; the kill
signal; the 12-month signal; and order independence as a property."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.eval import NOW, T0, alpha, beta, resolutions, row, validation
from verifier.errors import FormatError
from verifier.evaluation.intervals import bootstrap_mean, bootstrap_ratio, wilson
from verifier.evaluation.report import EvalOptions, evaluate, render_text
from verifier.evaluation.rows import Attempt, ProjectHistory, parse_validation
from verifier.evaluation.signals import twelve_month_signal

GOLDEN = Path(__file__).parents[1] / "golden" / "eval" / "fixture.json"


def document(**changes: Any) -> dict[str, Any]:
    options = EvalOptions(now=NOW, weeks=2, recruited=("op-a",), validation=validation())
    return evaluate([alpha(), beta()], replace(options, **changes))


def value(estimate: dict[str, Any]) -> tuple[Any, ...]:
    return estimate["value"], estimate["n"], estimate["excluded"]


# --- intervals ----------------------------------------------------------------------------------


def test_wilson_matches_the_textbook_interval_and_is_unknown_without_trials() -> None:
    estimate = wilson(2, 3)
    assert estimate.value == pytest.approx(2 / 3)
    assert estimate.low == pytest.approx(0.2077, abs=1e-4) and estimate.high == pytest.approx(0.9385, abs=1e-4)
    assert wilson(0, 0).value is None and wilson(0, 0).to_json()["interval"] is None
    assert wilson(0, 5).low == 0.0 and wilson(5, 5).high == 1.0
    with pytest.raises(ValueError, match="3 successes out of 2"):
        wilson(3, 2)


def test_bootstrap_is_seeded_by_the_metric_name_and_brackets_the_estimate() -> None:
    values = [float(v) for v in range(1, 41)]
    first, again = bootstrap_mean(values, "m"), bootstrap_mean(list(reversed(values)), "m")
    assert first == again  # same multiset, same name: the same interval
    assert first.low is not None and first.high is not None and first.low < 20.5 < first.high
    assert bootstrap_mean(values, "other") != first  # another metric draws its own resamples
    assert bootstrap_mean([], "m").value is None
    ratio = bootstrap_ratio([(1.0, 0.0), (3.0, 2.0)], "r", excluded=4)
    assert ratio.value == 2.0 and ratio.n == 2 and ratio.excluded == 4
    assert bootstrap_ratio([(1.0, 0.0)], "r").value is None  # nothing accepted: unknown, not 0 or infinite


# --- per kind and per model -----------------------------------------------------------------------


def test_per_kind_metrics_of_the_fixture() -> None:
    kinds = document()["projects"]["alpha"]["by_kind"]
    extract, link, skeptic = kinds["extract"], kinds["link"], kinds["skeptic"]
    assert (extract["attempts"], extract["accepted"], extract["accepted_objects"]) == (3, 2, 3)
    assert value(extract["acceptance_rate"])[:2] == (pytest.approx(2 / 3), 3)
    # (0.30 for 2 objects) + (0.10 for 1); the rejected attempt did not disclose its cost: left out.
    assert value(extract["cost_per_accepted_object_usd"]) == (pytest.approx(0.4 / 3, abs=1e-6), 2, 1)
    assert value(extract["time_to_accept_s"]) == (250.0, 2, 0)  # 100 s and 400 s after the leaf rows
    assert value(extract["use_per_accepted_object"]) == (0.75, 3, 0)  # 1.0, 0.25, 1.0
    # fnd_a1 earned +1 through lnk_1; fnd_a2 (a skeptic's exempt link) and fnd_b1 (link withdrawn) 0.
    assert value(extract["resolution_accuracy"]) == (1.0, 1, 0)
    assert value(link["acceptance_rate"])[:2] == (0.5, 2)
    assert value(link["cost_per_accepted_object_usd"]) == (0.05, 2, 0)
    assert value(link["use_per_accepted_object"]) == (0.5, 2, 0)  # lnk_2 withdrawn: counts 0
    assert value(link["resolution_accuracy"]) == (0.5, 2, 0)  # lnk_1 right, lnk_2 would have lost
    assert value(skeptic["acceptance_rate"])[:2] == (1.0, 1)  # held counts: it passed the verifier
    assert value(skeptic["time_to_accept_s"])[:2] == (900.0, 1)
    assert skeptic["resolution_accuracy"]["value"] is None  # its only link scored 0: nothing to judge


def test_per_model_metrics_keep_undisclosed_models_apart() -> None:
    models = document()["projects"]["alpha"]["by_model"]
    assert sorted(models) == ["m-large", "m-small", "undisclosed"]
    assert value(models["m-large"]["cost_per_accepted_object_usd"]) == (0.15, 1, 0)
    assert value(models["m-small"]["acceptance_rate"])[:2] == (0.5, 4)
    assert value(models["m-small"]["cost_per_accepted_object_usd"]) == (pytest.approx(0.2 / 3, abs=1e-6), 3, 1)
    assert value(models["m-small"]["time_to_accept_s"]) == (550.0, 2, 0)
    assert sorted(document()["platform"]["by_kind"]) == ["extract", "link", "scout", "skeptic"]
    platform = document()["platform"]["by_model"]["m-large"]
    assert (platform["attempts"], platform["accepted"]) == (5, 2)  # alpha's one and beta's four
    stored = document()  # a label from before the manifest's rule is printed as its escape
    stored["platform"]["by_model"]["m-\x1b[2J"] = stored["platform"]["by_model"]["m-large"]
    assert "m-\\x1b[2J: acceptance" in render_text(stored) and "\x1b" not in render_text(stored)
    text = render_text(document()).splitlines()
    block = text.index("platform (2 projects)")  # the platform's own lines, before the projects'
    assert text[block + 1] == "  by kind" and any(line.startswith("    m-large: acceptance 0.400") for line in text)
    assert block < next(n for n, line in enumerate(text) if line.startswith("project "))


def test_project_metrics() -> None:
    project = document()["projects"]["alpha"]["project"]
    assert value(project["conflict_rate"])[:2] == (pytest.approx(1 / 7), 7)  # one stale of 7 submissions
    assert value(project["reviewer_catch_rate"]) == (1.0, 1, 0)  # rev_1 rejected lnk_2, which would have lost
    assert project["unresolved_count"] == 0 and project["hypothesis_moves"] == 2
    assert value(project["cost_per_hypothesis_move_usd"]) == (0.26, 5, 1)  # 0.52 usd over 2 moves
    assert document()["projects"]["beta"]["project"]["unresolved_count"] == 1


# --- skill versions, lift, the 12-month signal ----------------------------------------------------------


def test_a_version_that_wins_on_validation_and_loses_live_is_flagged() -> None:
    versions = {v["skill_version"]: v for v in document()["skill_versions"]}
    assert list(versions) == ["sk-1", "sk-2", "sk-3"]  # the order they went live
    assert value(versions["sk-1"]["live"]["acceptance_rate"])[:2] == (0.5, 2)
    assert value(versions["sk-2"]["live"]["acceptance_rate"])[:2] == (0.75, 4)
    assert value(versions["sk-3"]["live"]["acceptance_rate"])[:2] == (0.25, 4)
    assert value(versions["sk-2"]["live"]["cost_per_accepted_object_usd"]) == (0.055, 4, 0)
    assert value(versions["sk-1"]["validation"]["cost_per_accepted_object_usd"]) == (0.1, 10, 0)
    assert value(versions["sk-3"]["validation"]["cost_per_accepted_object_usd"]) == (None, 10, 1)
    assert [versions[v]["validation_stale"] for v in versions] == [False, False, True]
    assert "the validation set has gone stale" in versions["sk-3"]["note"]
    assert "STALE VALIDATION" in render_text(document())


def test_lift_is_pooled_and_the_kill_signal_fires_at_twenty_resolved() -> None:
    lift = document()["lift"]
    assert lift["overall"] == {"n": 1, "wins": 1, "losses": 0, "ties": 0, "unresolved": 1, "no_baseline": 0,
                               "lift": 1.0}
    assert not lift["kill_signal"] and lift["statement"].startswith("No kill signal yet")
    options = EvalOptions(now=NOW)
    killed = evaluate([resolutions(3, 4, 6, "p1"), resolutions(2, 3, 3, "p2")], options)["lift"]
    assert killed["overall"]["n"] == 21 and killed["overall"]["lift"] == pytest.approx(-2 / 21)
    assert killed["projects"]["p1"]["lift"] == pytest.approx(-1 / 13)  # per project too, but pooled decides
    assert killed["kill_signal"]
    assert killed["statement"].startswith("KILL SIGNAL: lift -0.095 ≤ 0 across 21 resolved hypotheses")
    low, high = killed["interval"]
    assert low < killed["overall"]["lift"] < high
    assert not evaluate([resolutions(2, 3, 14)], options)["lift"]["kill_signal"]  # 19: too few to judge
    assert not evaluate([resolutions(12, 3, 6)], options)["lift"]["kill_signal"]
    assert evaluate([resolutions(5, 5, 10)], options)["lift"]["kill_signal"]  # lift exactly 0 is the kill
    assert evaluate([], options)["lift"]["overall"]["lift"] is None


def test_twelve_month_signal_of_the_fixture() -> None:
    signal = document()["twelve_month_signal"]
    assert [(w["week_start"], w["names"]) for w in signal["by_week"]] == [
        ("2027-02-25", ["op-b", "op-c"]),  # op-a is the steward's own recruit
        ("2027-03-04", ["op-d"]),
    ]
    assert signal["count"] == 0 and not signal["met"]


def test_twelve_month_signal_counts_unrecruited_operators_present_every_week() -> None:
    rows: list[Attempt] = []
    start = NOW - timedelta(weeks=12)
    for number in range(1, 13):
        operator = f"op-{number:02d}"
        for week in range(12):
            if operator == "op-12" and week == 5:
                continue  # one missed week loses the operator
            rows.append(replace(row("p", 0, 0, "submit", kind="extract", operator=operator),
                                at=start + timedelta(weeks=week, hours=1)))
    rows.append(replace(row("p", 0, 0, "submit", kind="extract", operator="op-13"), at=NOW))  # `now` is outside
    rows.append(replace(row("p", 0, 0, "submit", "rejected", kind="extract", operator="op-13"), at=start))
    signal = twelve_month_signal(rows, now=NOW, recruited=["op-01"], weeks=12)
    assert signal["count"] == 10 and signal["met"]
    assert signal["operators_every_week"] == [f"op-{n:02d}" for n in range(2, 12)]
    assert [w["operators"] for w in signal["by_week"]] == [11] * 5 + [10] + [11] * 6


# --- unknowns, --since, the document -------------------------------------------------------------


def test_since_keeps_leaf_rows_and_drops_earlier_attempts() -> None:
    later = document(since=T0 + timedelta(seconds=450))
    assert sorted(later["projects"]["alpha"]["by_kind"]) == ["link", "skeptic"]  # extract attempts were earlier
    link = later["projects"]["alpha"]["by_kind"]["link"]
    assert value(link["time_to_accept_s"])[:2] == (700.0, 1)  # the leaf row, before --since, still counts
    assert later["lift"]["overall"]["n"] == 1  # H1 was decided after --since


def test_the_golden_document() -> None:
    data = json.dumps(document(), sort_keys=True, indent=2) + "\n"
    if os.environ.get("RW_UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(data)
    assert data == GOLDEN.read_text(), "differs from tests/golden/eval/fixture.json (RW_UPDATE_GOLDEN=1 to renew)"


def test_validation_results_file_errors_name_what_and_where() -> None:
    good = b'{"version": 1, "results": [{"skill_version": "sk-1", "attempts": 4, "accepted": 2}]}'
    assert parse_validation(good, "v.json")[0].accepted == 2
    with pytest.raises(FormatError, match=r"v.json.*results\[0\]: 5 accepted out of 4"):
        parse_validation(good.replace(b'"accepted": 2', b'"accepted": 5'), "v.json")
    with pytest.raises(FormatError, match=r"v.json: field results.0.x: unknown field") as info:
        parse_validation(b'{"results": [{"skill_version": "sk-1", "attempts": 1, "accepted": 1, "x": 1}]}', "v.json")
    assert "pydantic" not in str(info.value)
    with pytest.raises(FormatError, match=r"v\.json: not JSON"):
        parse_validation(b'{"results": [', "v.json")
    # A cost of null is "nothing disclosed", as {} is, the gate's own spelling.
    for cost in (b"null", b"{}"):
        result = parse_validation(good.replace(b'"accepted": 2', b'"accepted": 2, "cost": ' + cost), "v.json")[0]
        assert result.cost.usd is None and result.cost.tokens is None


# --- order independence ----------------------------------------------------------------------------


def _renumber(history: ProjectHistory, order: list[int]) -> ProjectHistory:
    """The same rows landed in another order: new seqs, the same times and contents."""
    shuffled = [history.rows[i] for i in order]
    return replace(history, rows=tuple(replace(r, seq=n) for n, r in enumerate(shuffled)),
                   resolutions=tuple(reversed(history.resolutions)))


@settings(max_examples=15, deadline=None)
@given(st.permutations(list(range(12))), st.permutations(list(range(6))))
def test_metrics_do_not_depend_on_the_order_rows_landed_in(first: list[int], second: list[int]) -> None:
    options = EvalOptions(now=NOW, weeks=2, recruited=("op-a",), validation=validation())
    expected = evaluate([alpha(), beta()], options)
    shuffled = evaluate([_renumber(beta(), second), _renumber(alpha(), first)],
                        replace(options, validation=tuple(reversed(options.validation))))
    assert shuffled == expected
