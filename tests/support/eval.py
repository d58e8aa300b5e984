"""The evaluation's fixture histories as plain rows: two projects with several leaf kinds, models
and skill versions, a resolution, validation results where one version wins on validation and
loses live, and a platform where the kill signal fires. Numbers worked out by hand are in
tests/evaluation/test_eval_metrics.py next to the assertions that use them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from verifier.evaluation.rows import Attempt, ProjectHistory, ResolvedHypothesis, ValidationCost, ValidationResult
from verifier.scoring.resolution import Finding, Link, Resolution, Review

T0 = datetime(2027, 3, 1, 9, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=10)


def row(project: str, seq: int, seconds: float, action: str, outcome: str = "accepted", **fields: object) -> Attempt:
    values: dict[str, object] = {"actor": "agent", "actor_type": "agent", **fields}
    return Attempt(project=project, seq=seq, at=T0 + timedelta(seconds=seconds), action=action, outcome=outcome,
                   **values)  # type: ignore[arg-type]


def submit(project: str, seq: int, seconds: float, outcome: str, *, leaf: str, kind: str, operator: str,
           model: str | None, skill: str, usd: float | None, objects: tuple[str, ...] | None = None,
           reason: str | None = None) -> Attempt:
    return row(project, seq, seconds, "submit", outcome, leaf_id=leaf, kind=kind, actor=f"agent-{operator}",
               operator=operator, model=model, skill_version=skill, usd=usd, objects=objects, reason_code=reason)


def alpha() -> ProjectHistory:
    p = "alpha"
    rows = (
        row(p, 0, 0, "init", actor="steward", actor_type="verifier"),
        row(p, 1, 0, "leaf", leaf_id="ex-1", kind="extract", actor="planner", actor_type="planner"),
        row(p, 2, 0, "leaf", leaf_id="ex-2", kind="extract", actor="planner", actor_type="planner"),
        row(p, 3, 0, "leaf", leaf_id="ln-1", kind="link", actor="planner", actor_type="planner"),
        row(p, 4, 0, "leaf", leaf_id="sk-1", kind="skeptic", actor="planner", actor_type="planner"),
        submit(p, 5, 100, "accepted", leaf="ex-1", kind="extract", operator="op-a", model="m-large", skill="sk-1",
               usd=0.30, objects=("fnd_a1", "fnd_a2")),
        submit(p, 6, 200, "rejected", leaf="ex-2", kind="extract", operator="op-b", model="m-small", skill="sk-1",
               usd=None, reason="excerpt_not_found"),
        submit(p, 7, 400, "accepted", leaf="ex-2", kind="extract", operator="op-b", model="m-small", skill="sk-2",
               usd=0.10, objects=("fnd_b1",)),
        submit(p, 8, 500, "rejected", leaf="ln-1", kind="link", operator="op-b", model="m-small", skill="sk-2",
               usd=0.05, reason="stale"),
        submit(p, 9, 700, "accepted", leaf="ln-1", kind="link", operator="op-b", model="m-small", skill="sk-2",
               usd=0.05, objects=("lnk_1", "lnk_2")),
        submit(p, 10, 900, "held", leaf="sk-1", kind="skeptic", operator="op-c", model=None, skill="sk-2",
               usd=0.02, objects=("lnk_3",)),
        row(p, 11, 1000, "human", leaf_id=None, kind="human", actor="steward", actor_type="human", operator="steward"),
    )
    resolved = ResolvedHypothesis(
        resolution=Resolution("H1", "true", "true", "false"),
        decided_at=T0 + timedelta(days=2),
        links=(Link("lnk_1", "fnd_a1", "H1", "supports", "link", "op-b"),
               Link("lnk_2", "fnd_b1", "H1", "contradicts", "link", "op-b", in_evidence=False),
               Link("lnk_3", "fnd_a2", "H1", "contradicts", "skeptic", "op-c")),
        reviews=(Review("rev_1", "lnk_2", "op-c", "reject"),),
        findings=(Finding("fnd_a1", "op-a"), Finding("fnd_a2", "op-a"), Finding("fnd_b1", "op-b")),
    )
    use = {"fnd_a1": 1.0, "fnd_a2": 0.25, "fnd_b1": 1.0, "lnk_1": 1.0, "lnk_2": 0.0, "lnk_3": 1.0}
    return ProjectHistory(project=p, rows=rows, use=use, resolutions=(resolved,), unresolved_count=0)


def beta() -> ProjectHistory:
    """A later project on skill version sk-3, which does badly live."""
    p = "beta"
    day = 8 * 86400
    rows = (
        row(p, 0, day, "init", actor="steward", actor_type="verifier"),
        row(p, 1, day, "leaf", leaf_id="sc-1", kind="scout", actor="planner", actor_type="planner"),
        submit(p, 2, day + 60, "rejected", leaf="sc-1", kind="scout", operator="op-d", model="m-large", skill="sk-3",
               usd=0.20, reason="source_policy"),
        submit(p, 3, day + 120, "rejected", leaf="sc-1", kind="scout", operator="op-d", model="m-large", skill="sk-3",
               usd=0.20, reason="source_policy"),
        submit(p, 4, day + 180, "crash", leaf="sc-1", kind="scout", operator="op-d", model="m-large", skill="sk-3",
               usd=0.20),
        submit(p, 5, day + 300, "accepted", leaf="sc-1", kind="scout", operator="op-d", model="m-large", skill="sk-3",
               usd=0.20, objects=("src_x",)),
    )
    resolved = ResolvedHypothesis(Resolution("H9", "unresolved", "none", None), T0 + timedelta(days=9))
    return ProjectHistory(project=p, rows=rows, use={"src_x": 0.0}, resolutions=(resolved,), unresolved_count=1)


def validation() -> tuple[ValidationResult, ...]:
    """sk-2 beats sk-1 on validation and live; sk-3 beats sk-2 on validation but loses live."""
    def result(version: str, accepted: int, attempts: int, objects: int, usd: float | None) -> ValidationResult:
        return ValidationResult(skill_version=version, validation_set="vs-1", attempts=attempts, accepted=accepted,
                                objects=objects, cost=ValidationCost(usd=usd))

    return (result("sk-1", 6, 10, 12, 1.2), result("sk-2", 7, 10, 14, 1.4), result("sk-3", 9, 10, 18, None))


def resolutions(wins: int, losses: int, ties: int, project: str = "kill") -> ProjectHistory:
    """A project whose only content is resolved hypotheses with the given lift terms."""
    items = []
    for number in range(wins + losses + ties):
        if number < wins:
            corpus, baseline = "true", "false"
        elif number < wins + losses:
            corpus, baseline = "false", "true"
        else:
            corpus, baseline = "true", "true"
        items.append(ResolvedHypothesis(Resolution(f"H{number + 1}", "true", corpus, baseline),  # type: ignore[arg-type]
                                        T0 + timedelta(days=1)))
    return ProjectHistory(project=project, rows=(), resolutions=tuple(items))
