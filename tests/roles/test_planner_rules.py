"""The Planner's pure rules: golden decisions on fixed project states, and properties over
generated ones (disjoint open leaves, nothing new adds nothing, budget respected)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.roles.lessons import FailedSource, SkepticNote, research_lessons
from verifier.roles.planning import (
    HypothesisFacts,
    OpenLeaf,
    ProjectState,
    SourceFacts,
    WakePlan,
    due,
    leaf_keys,
    plan,
)

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
TIP = "a" * 40
S1, S2, S3, S4 = (f"src_{n:016x}" for n in (0x11, 0x22, 0x33, 0x44))
F = [f"fnd_{n:016x}" for n in range(1, 26)]


def state(**changes: object) -> ProjectState:
    base = ProjectState(
        slug="demo", tip=TIP, steward="stew", hold_plans=False, leaves_max=40,
        hypotheses=[HypothesisFacts("H1", 2, "active", True), HypothesisFacts("H2", 1, "loose", False),
                    HypothesisFacts("H3", 1, "active", True, challenged=True)],
        sources=[SourceFacts(S1, "included", 900, warm=True), SourceFacts(S2, "included", 50_000),
                 SourceFacts(S3, "failed", 100), SourceFacts(S4, "included", 800, extracted=True)],
        open_leaves=[], findings=5,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def summary(result: WakePlan) -> list[tuple[str, str]]:
    return [(c.kind, ",".join(sorted(leaf_keys(c))) + (" warm" if c.warm else "")) for c in result.leaves]


def test_a_fresh_project_gets_warm_leaves_then_extract_then_skeptic_in_priority_order() -> None:
    result = plan(state(), NOW)
    assert summary(result) == [
        ("extract", f"source:{S1} warm"),  # a steward's warm source first
        ("extract", f"source:{S4} warm"),  # then one that already yielded findings
        ("extract", f"source:{S2}"),  # too big for a warm leaf; never a failed source
        ("skeptic", "hypothesis:H1"),  # H3 already has a contradicts link or a note; H2 is loose
    ]
    assert result.targets == ["H1", "H3"]
    assert [q.hypothesis_id for q in result.questions] == ["H2"]
    assert any("H2 is not targeted" in d for d in result.decisions)
    assert all(c.base_revision == TIP and c.plan_id == result.plan_id for c in result.leaves)
    assert result.leaves[0].expires_at - NOW == timedelta(hours=24)


def test_overlapping_candidates_are_refused_and_named() -> None:
    open_leaves = [OpenLeaf("extract-old", "extract", frozenset({f"source:{S2}"})),
                   OpenLeaf("skeptic-old", "skeptic", frozenset({"hypothesis:H1"}))]
    result = plan(state(open_leaves=open_leaves), NOW)
    assert summary(result) == [("extract", f"source:{S1} warm"), ("extract", f"source:{S4} warm")]
    assert [r.reason for r in result.refused] == [
        f"overlaps open leaf extract-old on source:{S2}", "overlaps open leaf skeptic-old on hypothesis:H1"]


def test_findings_are_linked_in_batches_and_reviewed_one_object_each() -> None:
    result = plan(state(sources=[], unfiled={"H1": F[:12], "H3": F[:3]},
                        unreviewed=["findings/00/" + F[0] + ".yaml", "links/aa/lnk_" + "a" * 16 + ".yaml"]), NOW)
    kinds = [c.kind for c in result.leaves]
    assert kinds == ["link", "link", "link", "skeptic", "review", "review"]
    assert [c.inputs.finding_ids for c in result.leaves[:3]] == [F[:10], F[10:12], F[:3]]
    assert [c.inputs.hypothesis_id for c in result.leaves[:3]] == ["H1", "H1", "H3"]
    assert result.leaves[0].inputs.hypothesis_revision == 2


PAYWALLED = [FailedSource(S2, "https://www.ft.example/a", "GET https://www.ft.example/a answered HTTP 402; "
                                                            "expected a 2xx response."),
             FailedSource(S3, "https://ft.example/b", "the page asks for a subscription")]


def test_scout_and_guide_leaves_come_last_and_loose_hypotheses_get_none() -> None:
    result = plan(state(sources=[], gaps=[("H1", "pricing data for 2027"), ("H2", "anything"), (None, "a survey")],
                        lessons=research_lessons(PAYWALLED, []), field_guide="# Field Guide\n"), NOW)
    assert summary(result)[-3:] == [("scout", "gap:pricing data for 2027"), ("scout", "gap:a survey"),
                                    ("guide", "guide")]
    assert "ft.example" in (result.leaves[-1].title or "")


def test_repeated_failed_sources_of_one_host_become_a_research_lesson() -> None:
    lessons = research_lessons([*PAYWALLED, FailedSource(S4, "https://other.example/c", "HTTP 402")], [])
    assert [(lesson.mention, lesson.evidence) for lesson in lessons] == [("ft.example", (S2, S3))]
    assert lessons[0].text.startswith("ft.example paywalls its documents: 2 scouted sources from it failed")
    # One failure is bad luck with one URL; a reason that says nothing general is no lesson either.
    assert research_lessons(PAYWALLED[:1], []) == []
    assert research_lessons([FailedSource(S2, "https://a.example/x", "offline mode: URL not checked")] * 2, []) == []


def test_a_skeptic_notes_why_becomes_a_lesson_once() -> None:
    why = "the metric is reported quarterly, so monthly figures do not exist"
    lessons = research_lessons([], [SkepticNote("H1", "monthly churn", why), SkepticNote("H3", "churn", why)])
    assert [lesson.text for lesson in lessons] == [f"Looking for monthly churn (H1), the skeptic found none: {why}"]


def test_leaf_craft_rejections_never_ask_for_a_guide_leaf() -> None:
    result = plan(state(rejections={("extract", "excerpt_not_found"): 9}, field_guide="# Field Guide\n"), NOW)
    assert "guide" not in [c.kind for c in result.leaves]
    assert any("excerpt_not_found: leaf craft" in d and "ops wiki" in d for d in result.decisions)


def test_a_lesson_the_field_guide_already_has_asks_for_no_guide_leaf() -> None:
    result = plan(state(lessons=research_lessons(PAYWALLED, []),
                        field_guide="FT.example paywalls: use the press release (human: stew)"), NOW)
    assert "guide" not in [c.kind for c in result.leaves]


def test_the_steward_is_asked_once() -> None:
    assert plan(state(asked=frozenset({"H2:1"})), NOW).questions == []
    assert [q.key for q in plan(state(asked=frozenset({"H2:0"})), NOW).questions] == ["H2:1"]


def test_budget_defers_the_rest_and_says_so() -> None:
    result = plan(state(leaves_max=2), NOW)
    assert len(result.leaves) == 2
    assert any("Deferred 2 more leaves" in d for d in result.decisions)


def test_warm_leaves_the_budget_leaves_out_are_deferred_and_said_so() -> None:
    # Found by the property below: a wake that spent its budget on the warm pool added the rest of
    # the pool at the next wake without having said it would.
    small = [SourceFacts(f"src_{n:016x}", "included", 1, extracted=True) for n in range(1, 3)]
    result = plan(state(sources=small, leaves_max=1), NOW)
    assert [c.warm for c in result.leaves] == [True]
    # the other small source's warm leaf, and the one leaf of another kind the budget left out
    assert any("Deferred 2 more leaves" in d for d in result.decisions)


def test_a_backlog_of_one_kind_does_not_starve_the_others() -> None:
    many = [SourceFacts(f"src_{n:016x}", "included", 50_000) for n in range(100, 110)]
    result = plan(state(sources=many, unfiled={"H1": F[:25]}, unreviewed=[f"findings/00/{f}.yaml" for f in F[:5]],
                        leaves_max=6), NOW)
    assert [c.kind for c in result.leaves] == ["extract", "extract", "link", "link", "skeptic", "review"]
    assert any("Deferred" in d for d in result.decisions)


def test_repeatedly_failed_sources_get_no_more_extract_leaves() -> None:
    result = plan(state(sources=[SourceFacts(S2, "included", 50_000, failures=3)]), NOW)
    assert "extract" not in [c.kind for c in result.leaves]
    assert any(S2 in d and "rejected" in d for d in result.decisions)


def test_warm_only_tops_up_the_pool_and_nothing_else() -> None:
    open_leaves = [OpenLeaf("extract-w", "extract", frozenset({f"source:{S1}"}), warm=True)]
    result = plan(state(open_leaves=open_leaves), NOW, warm_only=True)
    assert summary(result) == [("extract", f"source:{S4} warm")]
    assert result.questions == []


def test_no_skeptic_leaf_before_there_are_findings_to_hunt_through() -> None:
    result = plan(state(findings=0), NOW)
    assert "skeptic" not in [c.kind for c in result.leaves]
    assert any("No skeptic leaf yet" in d for d in result.decisions)


def test_the_planners_unresolved_count_is_recorded_in_the_plan() -> None:
    assert any(d.startswith("unresolved_count is 2") for d in plan(state(unresolved_count=2), NOW).decisions)
    assert not any(d.startswith("unresolved_count") for d in plan(state(), NOW).decisions)


def test_cadence() -> None:
    assert due(None, "20m", NOW)
    assert not due(NOW - timedelta(minutes=19), "20m", NOW)
    assert due(NOW - timedelta(minutes=20), "20m", NOW)


# Properties ---------------------------------------------------------------------------------------

source_ids = st.integers(0, 40).map(lambda n: f"src_{n:016x}")
sources = st.lists(st.builds(SourceFacts, source_ids, st.sampled_from(["staged", "included", "failed"]),
                             st.integers(1, 60_000), st.booleans(), st.booleans(), st.integers(0, 4)),
                   max_size=12, unique_by=lambda s: s.source_id)
hypotheses = st.lists(st.builds(HypothesisFacts, st.integers(1, 6).map(lambda n: f"H{n}"), st.integers(1, 3),
                                st.sampled_from(["loose", "active", "resolved"]), st.booleans(), st.booleans()),
                      max_size=5, unique_by=lambda h: h.hypothesis_id)
findings = st.lists(st.sampled_from(F), max_size=15, unique=True)


@st.composite
def states(draw: st.DrawFn) -> ProjectState:
    hyps = draw(hypotheses)
    return state(
        hypotheses=hyps, sources=draw(sources), leaves_max=draw(st.integers(0, 15)),
        unfiled={h.hypothesis_id: draw(findings) for h in hyps},
        unreviewed=[f"findings/00/{f}.yaml" for f in draw(findings)],
        gaps=[(None, g) for g in draw(st.lists(st.sampled_from(["a", "b", "c", " A "]), max_size=4))],
        rejections={("extract", "x"): draw(st.integers(0, 5))},
    )


def as_open(result: WakePlan) -> list[OpenLeaf]:
    return [OpenLeaf(c.leaf_id, c.kind, leaf_keys(c), bool(c.warm)) for c in result.leaves]


@settings(max_examples=150, deadline=None)
@given(states())
def test_a_wake_never_creates_overlapping_leaves_and_respects_the_budget(project: ProjectState) -> None:
    result = plan(project, NOW)
    assert len(result.leaves) <= project.leaves_max
    held = [key for leaf in project.open_leaves for key in leaf.keys]
    keys = [key for c in result.leaves for key in leaf_keys(c)]
    assert len(keys) == len(set(keys)), "two new leaves share a source, hypothesis or object"
    assert not set(keys) & set(held)
    ready = {h.hypothesis_id for h in project.hypotheses if h.ready and h.status != "resolved"}
    for contract in result.leaves:
        assert contract.inputs.hypothesis_id is None or contract.inputs.hypothesis_id in ready


@settings(max_examples=150, deadline=None)
@given(states())
def test_waking_twice_with_nothing_new_adds_nothing(project: ProjectState) -> None:
    first = plan(project, NOW)
    # The first wake's leaves are open now, and the steward has been asked.
    again = replace(project, open_leaves=project.open_leaves + as_open(first),
                    asked=project.asked | {q.key for q in first.questions})
    second = plan(again, NOW + timedelta(hours=1))
    deferred = any("Deferred" in d for d in first.decisions)
    if not deferred:
        assert second.leaves == [] and second.questions == []
