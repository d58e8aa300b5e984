"""Resolution credit, review accuracy and lift (design §7.3, §7.4): the golden resolution fixture,
the rules one by one, and properties (lift bounds, sign flips, order independence, additivity).

Regenerate the golden files after an intended change with RW_UPDATE_GOLDEN=1 and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.formats.usescores import UseSummary
from verifier.scoring.resolution import (
    OUTCOMES,
    STANCES,
    Finding,
    Link,
    OperatorActivity,
    Outcome,
    Report,
    Resolution,
    Review,
    ScoringInputError,
    activity_from_use_summary,
    credit_deltas,
    deltas_document,
    dump_json,
    lift,
    lift_term,
    link_credit,
    platform_lift,
    resolution_document,
    review_point,
    score_resolutions,
)

GOLDEN = Path(__file__).parents[1] / "golden" / "resolution"
LEAF_KINDS = ("skeptic", "link", "human")


def load_fixture() -> dict[str, Any]:
    raw = json.loads((GOLDEN / "input.json").read_text())
    return {
        "project": raw["project"],
        "resolutions": [Resolution(**r) for r in raw["resolutions"]],
        "findings": [Finding(**f) for f in raw["findings"]],
        "links": [Link(**link) for link in raw["links"]],
        "reviews": [Review(**r) for r in raw["reviews"]],
        "reports": [Report(report_id=r["report_id"], introduced=tuple(r["introduced"])) for r in raw["reports"]],
        "activity": [OperatorActivity(**a) for a in raw["activity"]],
        "override": Resolution(**raw["override"]),
    }


def golden_outputs(fixture: dict[str, Any]) -> dict[str, bytes]:
    scores = score_resolutions(fixture["resolutions"], fixture["links"], fixture["reviews"], fixture["findings"],
                               fixture["reports"])
    h1 = next(r for r in fixture["resolutions"] if r.hypothesis_id == "H1")
    resolved = credit_deltas(h1, fixture["links"], fixture["reviews"], fixture["findings"])
    overridden = credit_deltas(fixture["override"], fixture["links"], fixture["reviews"], fixture["findings"],
                               before=h1)
    return {
        "resolution.json": dump_json(resolution_document(fixture["project"], scores, fixture["activity"])),
        "credit_deltas.json": dump_json({"resolved": deltas_document(resolved),
                                         "overridden": deltas_document(overridden)}),
    }


def test_golden_resolution_fixture() -> None:
    outputs = golden_outputs(load_fixture())
    if os.environ.get("RW_UPDATE_GOLDEN"):
        for name, data in outputs.items():
            (GOLDEN / name).write_bytes(data)
    for name, data in outputs.items():
        assert data == (GOLDEN / name).read_bytes(), f"{name} differs from the golden file"


def test_golden_fixture_reads_as_the_design_says() -> None:
    """The numbers in the golden file, spelled out: a check on the golden file itself."""
    document = json.loads((GOLDEN / "resolution.json").read_text())
    credit = {link["link_id"][4:6]: link["credit"] for link in document["links"]}
    assert credit == {"01": 1, "02": 1, "03": 1, "04": -1, "05": 0, "06": 0, "07": 0, "08": 0,
                      "09": -1, "10": 1, "11": 0}  # lnk_12 is on H4, not resolved yet
    assert {f["finding_id"][4:6]: f["credit"] for f in document["findings"]} == {"a1": 0, "b2": 2, "c3": -1, "d4": 1}
    assert {r["report_id"]: r["credit"] for r in document["reports"]} == {"weekly-1": 1 + 2 - 1, "weekly-2": -1}
    assert {a["reviewer"]: a["score"] for a in document["review_accuracy"]} == {"frank": 2, "grace": -3}
    assert document["lift"] == {"n": 2, "wins": 1, "losses": 0, "ties": 1, "unresolved": 1, "no_baseline": 0,
                                "lift": 0.5}
    assert document["unresolved_count"] == 1
    components = {row["operator"]: row for row in document["components"]}
    assert set(components["alice"]) == {"operator", "accepted_leaves", "use_score", "resolution_credit",
                                        "review_accuracy", "cost_per_accepted_object"}
    assert components["erin"]["accepted_leaves"] is None  # no activity given: unknown, not zero
    assert components["grace"]["cost_per_accepted_object"] == {"usd": None, "tokens": None}
    assert components["bob"]["resolution_credit"] == 0 - 1 + 1 + 2  # links l1, l9, findings b2
    deltas = json.loads((GOLDEN / "credit_deltas.json").read_text())
    dave = next(d for d in deltas["resolved"] if d["operator"] == "dave")
    assert dave["link_credit"] == 0 and "Your links: 0 (2 links)." in dave["message"]


# --- the rules ----------------------------------------------------------------------------


@pytest.mark.parametrize(("stance", "kind", "outcome", "credit"), [
    ("supports", "link", "true", 1), ("supports", "link", "false", -1),
    ("contradicts", "link", "false", 1), ("contradicts", "link", "true", -1),
    ("contradicts", "skeptic", "true", 0), ("contradicts", "skeptic", "false", 1),
    ("supports", "skeptic", "false", -1),  # the exemption covers contradicts links only
    ("context", "link", "true", 0), ("context", "skeptic", "false", 0),
    ("supports", "link", "unresolved", 0), ("contradicts", "human", "unresolved", 0),
    ("contradicts", "human", "true", -1),
])
def test_link_credit(stance: Any, kind: str, outcome: Outcome, credit: int) -> None:
    assert link_credit(stance, kind, outcome) == credit


def test_review_points() -> None:
    good = Link("lnk_1", "fnd_1", "H1", "supports", "link", "ann")
    assert review_point("accept", good, "true") == 1
    assert review_point("amend", good, "true") == 1
    assert review_point("reject", good, "true") == -1
    assert review_point("reject", good, "false") == 1
    assert review_point("accept", good, "unresolved") == 0
    exempt = Link("lnk_2", "fnd_1", "H1", "contradicts", "skeptic", "ann")
    assert review_point("reject", exempt, "true") == 0


def test_lift_terms() -> None:
    assert lift_term(Resolution("H1", "true", "true", "false")) == 1
    assert lift_term(Resolution("H1", "true", "false", "true")) == -1
    assert lift_term(Resolution("H1", "true", "true", "true")) == 0
    assert lift_term(Resolution("H1", "false", "true", "true")) == 0
    assert lift_term(Resolution("H1", "true", "none", "true")) == -1  # an abstaining corpus never wins
    assert lift_term(Resolution("H1", "true", "unresolved", "false")) == 0
    assert lift_term(Resolution("H1", "unresolved", "true", "false")) is None
    assert lift_term(Resolution("H1", "true", "true", None)) is None
    assert lift([]).lift is None
    assert lift([Resolution("H1", "true", "true", None)]).no_baseline == 1


def test_platform_lift_pools_terms() -> None:
    by_project = {
        "a": [Resolution("H1", "true", "true", "false")],
        "b": [Resolution("H1", "true", "false", "true"), Resolution("H2", "false", "false", "true"),
              Resolution("H3", "false", "true", "true")],
    }
    result = platform_lift(by_project)
    assert result.projects["a"].lift == 1.0
    assert result.projects["b"].lift == 0.0
    assert result.overall.n == 4 and result.overall.lift == (2 - 1) / 4  # pooled, not the mean of 1.0 and 0.0
    projects = result.to_json()["projects"]
    assert isinstance(projects, dict) and list(projects) == ["a", "b"]


def test_unresolved_gives_no_credit_anywhere() -> None:
    fixture = load_fixture()
    unresolved = [Resolution(r.hypothesis_id, "unresolved", r.corpus_verdict, r.baseline_verdict)
                  for r in fixture["resolutions"]]
    scores = score_resolutions(unresolved, fixture["links"], fixture["reviews"], fixture["findings"],
                               fixture["reports"])
    assert all(item.credit == 0 for item in scores.links)
    assert set(scores.findings.values()) <= {0} and set(scores.reports.values()) == {0}
    assert all(a.score == 0 for a in scores.review_accuracy.values())
    assert scores.unresolved_count == 3 and scores.lift.lift is None


def test_inputs_that_contradict_themselves() -> None:
    link = Link("lnk_1", "fnd_1", "H1", "supports", "link", "ann")
    resolved = [Resolution("H1", "true", "true", "false")]
    with pytest.raises(ScoringInputError, match="appears twice"):
        score_resolutions(resolved, [link, link])
    with pytest.raises(ScoringInputError, match="appears twice"):
        score_resolutions([*resolved, *resolved], [link])
    with pytest.raises(ScoringInputError, match="not among the links"):
        score_resolutions(resolved, [link], [Review("rev_1", "lnk_9", "bo", "accept")])
    with pytest.raises(ScoringInputError, match="decision"):
        score_resolutions(resolved, [link], [Review("rev_1", "lnk_1", "bo", "approve")])  # type: ignore[arg-type]
    with pytest.raises(ScoringInputError, match="outcome"):
        score_resolutions([Resolution("H1", "yes", "true", "false")], [link])  # type: ignore[arg-type]
    with pytest.raises(ScoringInputError, match="stance"):
        score_resolutions(resolved, [Link("lnk_1", "fnd_1", "H1", "refutes", "link", "ann")])  # type: ignore[arg-type]
    with pytest.raises(ScoringInputError, match="keep the hypothesis"):
        credit_deltas(Resolution("H2", "true", "true", "false"), [link], before=resolved[0])


def test_activity_from_the_use_summary() -> None:
    summary = {"operators": {"bob": {"accepted_leaves": 2, "accepted_objects": 4, "use_score": 1.25, "tokens": 10,
                                     "usd": 0.5, "usd_per_accepted_object": 0.125},
                             "al": {"accepted_leaves": 1, "accepted_objects": 0, "use_score": 0.0, "tokens": 0,
                                    "usd": 0.0}}}
    activity = activity_from_use_summary(UseSummary.parse(json.dumps(summary).encode(), "scores/use.json"))
    assert [a.operator for a in activity] == ["al", "bob"]
    assert activity[1] == OperatorActivity("bob", 2, 4, 1.25, usd=0.5, tokens=10)
    assert activity_from_use_summary(UseSummary()) == []


# --- properties ---------------------------------------------------------------------------

HYPOTHESES = ("H1", "H2", "H3", "H4")
OPERATORS = ("ann", "bo", "cy", "di")
FINDINGS = tuple(f"fnd_{i:016x}" for i in range(5))

resolutions_st = st.lists(
    st.builds(Resolution, hypothesis_id=st.sampled_from(HYPOTHESES), outcome=st.sampled_from(OUTCOMES),
              corpus_verdict=st.sampled_from(("true", "false", "unresolved", "none")),
              baseline_verdict=st.sampled_from(("true", "false", None))),
    max_size=4, unique_by=lambda r: r.hypothesis_id,
)


@st.composite
def graphs(draw: st.DrawFn) -> tuple[list[Resolution], list[Link], list[Review], list[Finding], list[Report]]:
    resolutions = draw(resolutions_st)
    count = draw(st.integers(0, 12))
    links = [Link(link_id=f"lnk_{i:016x}", finding_id=draw(st.sampled_from(FINDINGS)),
                  hypothesis_id=draw(st.sampled_from(HYPOTHESES)), stance=draw(st.sampled_from(STANCES)),
                  leaf_kind=draw(st.sampled_from(LEAF_KINDS)), operator=draw(st.sampled_from(OPERATORS)),
                  in_evidence=draw(st.booleans()))
             for i in range(count)]
    reviews = []
    if links:
        for i in range(draw(st.integers(0, 8))):
            reviews.append(Review(review_id=f"rev_{i:016x}", link_id=draw(st.sampled_from(links)).link_id,
                                  reviewer=draw(st.sampled_from(OPERATORS)),
                                  decision=draw(st.sampled_from(("accept", "reject", "amend")))))
    findings = [Finding(f, draw(st.sampled_from(OPERATORS))) for f in FINDINGS]
    ids = [link.link_id for link in links] + list(FINDINGS)
    reports = [Report(f"report-{i}", tuple(draw(st.lists(st.sampled_from(ids), max_size=4)))) for i in range(2)]
    return resolutions, links, reviews, findings, reports


@given(resolutions_st)
def test_lift_stays_within_bounds(resolutions: list[Resolution]) -> None:
    result = lift(resolutions)
    assert result.lift is None or -1.0 <= result.lift <= 1.0
    assert result.n + result.unresolved + result.no_baseline == len(resolutions)


@given(st.dictionaries(st.sampled_from(("a", "b", "c")), resolutions_st, max_size=3))
def test_platform_lift_stays_within_bounds(by_project: dict[str, list[Resolution]]) -> None:
    result = platform_lift(by_project)
    for score in [result.overall, *result.projects.values()]:
        assert score.lift is None or -1.0 <= score.lift <= 1.0


@given(st.sampled_from(STANCES), st.sampled_from(LEAF_KINDS))
def test_credit_flips_sign_with_the_outcome_except_the_skeptic_exemption(stance: Any, kind: str) -> None:
    when_true, when_false = link_credit(stance, kind, "true"), link_credit(stance, kind, "false")
    if kind == "skeptic" and stance == "contradicts":
        assert (when_true, when_false) == (0, 1)
    else:
        assert when_true == -when_false


def _flip(outcome: Outcome) -> Outcome:
    return {"true": "false", "false": "true", "unresolved": "unresolved"}[outcome]  # type: ignore[return-value]


@settings(max_examples=150)
@given(graphs())
def test_whole_graph_credit_flips_with_the_outcome(graph: Any) -> None:
    resolutions, links, reviews, _, _ = graph
    flipped = [Resolution(r.hypothesis_id, _flip(r.outcome), r.corpus_verdict, r.baseline_verdict)
               for r in resolutions]
    before = {s.link.link_id: s.credit for s in score_resolutions(resolutions, links, reviews).links}
    after = {s.link.link_id: s for s in score_resolutions(flipped, links, reviews).links}
    for link_id, credit in before.items():
        item = after[link_id]
        if item.link.leaf_kind == "skeptic" and item.link.stance == "contradicts" and item.outcome != "unresolved":
            assert {credit, item.credit} <= {0, 1} and item.link.in_evidence == (credit + item.credit == 1)
        else:
            assert item.credit == -credit


@settings(max_examples=150)
@given(graphs(), st.randoms(use_true_random=False))
def test_scores_do_not_depend_on_input_order(graph: Any, rng: Any) -> None:
    resolutions, links, reviews, findings, reports = graph
    activity = [OperatorActivity(name, 1, 2, 0.25, usd=0.5, tokens=10) for name in OPERATORS]

    def outputs(res: list[Resolution], lnk: list[Link], rev: list[Review], fnd: list[Finding], rep: list[Report],
                act: list[OperatorActivity]) -> bytes:
        scores = score_resolutions(res, lnk, rev, fnd, rep)
        deltas = [d for r in res for d in credit_deltas(r, lnk, rev, fnd)]
        return dump_json(resolution_document("p", scores, act)) + dump_json(deltas_document(deltas))

    first = outputs(resolutions, links, reviews, findings, reports, activity)
    shuffled = [list(part) for part in (resolutions, links, reviews, findings, reports, activity)]
    for part in shuffled:
        rng.shuffle(part)
    assert outputs(*shuffled) == first


@settings(max_examples=150)
@given(graphs())
def test_sums_agree(graph: Any) -> None:
    resolutions, links, reviews, findings, reports = graph
    scores = score_resolutions(resolutions, links, reviews, findings, reports)
    assert sum(scores.findings.values()) == sum(s.credit for s in scores.links)
    assert sum(o.links for o in scores.operators.values()) == sum(s.credit for s in scores.links)
    assert sum(a.score for a in scores.review_accuracy.values()) == sum(j.point for j in scores.reviews)
    for item in scores.links:
        assert item.credit == (item.would_have if item.link.in_evidence else 0)


@settings(max_examples=150)
@given(graphs(), st.sampled_from(OUTCOMES), st.sampled_from(OUTCOMES))
def test_override_deltas_add_up(graph: Any, first: Outcome, second: Outcome) -> None:
    """Posting the resolution's deltas and then the override's gives the override's scores."""
    _, links, reviews, findings, _ = graph
    old, new = Resolution("H1", first, "true", "false"), Resolution("H1", second, "true", "false")

    def totals(*batches: list[Any]) -> dict[str, tuple[int, int, int]]:
        out: dict[str, tuple[int, int, int]] = {}
        for batch in batches:
            for d in batch:
                a, b, c = out.get(d.operator, (0, 0, 0))
                out[d.operator] = (a + d.link_credit, b + d.finding_credit, c + d.review_accuracy)
        return out

    stepwise = totals(credit_deltas(old, links, reviews, findings),
                      credit_deltas(new, links, reviews, findings, before=old))
    direct = totals(credit_deltas(new, links, reviews, findings))
    assert stepwise == direct


def test_messages() -> None:
    links = [Link("lnk_1", "fnd_1", "H1", "supports", "link", "ann"),
             Link("lnk_2", "fnd_1", "H1", "contradicts", "skeptic", "bo")]
    findings = [Finding("fnd_1", "cy")]
    reviews = [Review("rev_1", "lnk_1", "di", "reject")]
    resolved = Resolution("H1", "true", "true", "false")
    messages = {d.operator: d.message for d in credit_deltas(resolved, links, reviews, findings)}
    assert messages == {
        "ann": "H1 resolved true. Your links: +1 (1 link).",
        "bo": "H1 resolved true. Your links: 0 (1 link).",
        "cy": "H1 resolved true. Your findings: +1 (1 finding).",
        "di": "H1 resolved true. Your review accuracy: -1 (1 review).",
    }
    unresolved = credit_deltas(Resolution("H1", "unresolved", "none", "false"), links, reviews, findings)
    assert {d.message for d in unresolved} == {
        "H1 could not be resolved at its check date; unresolved gives no credit."}
    assert all(d.link_credit == d.finding_credit == d.review_accuracy == 0 for d in unresolved)
