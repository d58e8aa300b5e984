"""rw eval's fast path for the leaf metrics (each project's submissions worked out once as arrays,
one sort per scope, groups by label codes, the platform joined from its projects) gives exactly
the document of the straightforward computation, row by row and group by group, on generated
histories: equal units, ties, undisclosed cost and objects, claims, empty groups included; the
platform's intervals stratified by project."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.eval_reference import reference_by_kind_and_model, reference_platform
from verifier.evaluation.metrics import (
    COUNT_COLUMNS,
    UNIT_COLUMNS,
    Submissions,
    context_of,
    facts_of,
    platform_metrics,
    project_scope,
    submissions_of,
)
from verifier.evaluation.rows import Attempt, ProjectHistory

T0 = datetime(2027, 1, 1, tzinfo=UTC)
PROJECTS = ("alpha", "beta")
KINDS = ("extract", "link", "skeptic")
OBJECTS = tuple(f"fnd_{n:016x}" for n in range(6))


@st.composite
def histories(draw: st.DrawFn) -> list[ProjectHistory]:
    out = []
    for project in PROJECTS:
        rows: list[Attempt] = []
        for seq in range(draw(st.integers(0, 25))):
            kind = draw(st.sampled_from(KINDS))
            leaf = f"{kind}-{draw(st.integers(0, 3))}"
            at = T0 + timedelta(seconds=draw(st.sampled_from([0, 60, 3600, 86400])) + seq)
            if draw(st.booleans()):
                rows.append(Attempt(project, seq, at, "leaf", "accepted", leaf_id=leaf, kind=kind, actor="planner",
                                    actor_type="planner"))
                continue
            outcome = draw(st.sampled_from(["accepted", "held", "rejected"]))
            found = draw(st.one_of(st.none(), st.lists(st.sampled_from(OBJECTS), max_size=3, unique=True).map(tuple)))
            claimed = draw(st.one_of(st.none(), st.just(at - timedelta(seconds=30))))
            rows.append(Attempt(project, seq, at, "submit", outcome, leaf_id=leaf, kind=kind,
                                actor=f"agent-{seq % 3}", actor_type=draw(st.sampled_from(["agent", "agent", "human"])),
                                operator=f"op-{seq % 3}", model=draw(st.sampled_from(["m-a", "m-b", None])),
                                usd=draw(st.sampled_from([None, 0.0, 0.1, 0.25])),
                                objects=found if outcome != "rejected" else None, claimed_at=claimed))
        use = {object_id: draw(st.sampled_from([0.0, 0.25, 1.0])) for object_id in OBJECTS if draw(st.booleans())}
        out.append(ProjectHistory(project=project, rows=tuple(rows), use=use))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_fast_leaf_metrics_equal_the_straightforward_computation_per_project_and_platform(
        generated: list[ProjectHistory]) -> None:
    context = context_of(generated)
    parts = [submissions_of(history.rows, context) for history in generated]
    for history, part in zip(generated, parts, strict=True):  # every column, the move cost's included
        facts = [facts_of(row, context) for row in history.rows if row.is_agent_submission]
        assert np.array_equal(np.asarray([unit for unit, _ in facts]).reshape(-1, UNIT_COLUMNS), part.units)
        assert np.array_equal(np.asarray([counts for _, counts in facts]).reshape(-1, COUNT_COLUMNS), part.counts)
    scopes = [project_scope(part, history.project) for history, part in zip(generated, parts, strict=True)]
    for history, scope in zip(generated, scopes, strict=True):
        assert scope.document == reference_by_kind_and_model(history.rows, context, history.project)
    platform = platform_metrics(Submissions.join(parts), scopes)
    assert platform == reference_platform({history.project: history.rows for history in generated}, context)
