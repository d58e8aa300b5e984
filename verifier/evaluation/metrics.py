"""The design's §12 metrics as pure functions of plain rows (verifier.evaluation.rows).

Per leaf kind and per model (agent submissions only; a person's edit is not a leaf):
    acceptance rate          accepted (or held) / attempts                           Wilson
    cost per accepted object Σ usd / Σ accepted objects, over the attempts that      bootstrap
                             disclosed usd (rejected ones too: failure costs)
    time to accept           accepted row's time - the claim's start (recorded on    bootstrap
                             the row), or the leaf's opening (its contract's
                             created_at, else its leaf row) when never claimed;
                             seconds; how many of each is said (docs/eval.md)
    use per accepted object  mean U over the scored objects accepted attempts        bootstrap
                             brought (a withdrawn object counts 0)
    resolution accuracy      objects with positive credit / objects with nonzero     Wilson
                             credit at resolution (a link: the credit it would have
                             earned; a finding: Σ credit of its links)
Per project:
    conflict rate            `stale` rejections / submission attempts                Wilson
    reviewer catch rate      rejecting reviews confirmed by resolution (the link     Wilson
                             would have lost credit) / rejecting reviews judged
    unresolved_count         the Planner's count (scores/planner.json)
    cost per hypothesis move Σ usd / accepted link and skeptic submissions, over     bootstrap
                             the attempts that disclosed usd
Unknown inputs are left out and counted (`excluded`), never read as 0.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from verifier.evaluation.intervals import (
    Estimate,
    canonical_order,
    column_totals,
    ratios_of_sums,
    resampled_sums,
    resamples_for,
    stratified_sums,
    wilson,
)
from verifier.evaluation.rows import EVIDENCE_KINDS, UNDISCLOSED, Attempt, ProjectHistory, ResolvedHypothesis
from verifier.scoring.resolution import earned_credit, would_have_credit

STALE = "stale"


@dataclass(frozen=True)
class ProjectContext:
    """What the per-attempt metrics look up in one project: when each leaf was written, each
    object's use, and each object's resolution credit, keyed by the project's own ids."""

    opened: Mapping[str, float]  # leaf_id -> epoch seconds of its opening
    use: Mapping[str, float]
    credit: Mapping[str, int]


_NO_CONTEXT = ProjectContext({}, {}, {})


@dataclass(frozen=True)
class Context:
    """Each project's lookups (ProjectContext), by project slug. Per project rather than keyed by
    (project, id) pairs: a submission looks its objects up by their ids alone, with no pair made
    and hashed per object (rw eval does that for every object of the platform)."""

    projects: Mapping[str, ProjectContext]

    def of(self, project: str) -> ProjectContext:
        return self.projects.get(project, _NO_CONTEXT)


def object_credits(resolutions: Iterable[ResolvedHypothesis]) -> dict[str, int]:
    """Resolution credit per object: a link's would-have credit (judging its author, even when
    reviewed out), a finding's Σ earned credit over its links."""
    credit: dict[str, int] = {}
    findings: dict[str, int] = defaultdict(int)
    for resolved in resolutions:
        outcome = resolved.resolution.outcome
        for link in resolved.links:
            credit[link.link_id] = would_have_credit(link, outcome)
            findings[link.finding_id] += earned_credit(link, outcome)
    credit.update(findings)
    return credit


def context_of(histories: Iterable[ProjectHistory]) -> Context:
    """Each project's lookups; a leaf's opening is its contract's created_at, else its first
    `leaf` row. One history per project (a home's projects have distinct slugs)."""
    projects: dict[str, ProjectContext] = {}
    for history in histories:
        opened = {leaf_id: at.timestamp() for leaf_id, at in history.opened.items()}
        for row in history.rows:
            if row.action == "leaf" and row.leaf_id is not None and row.leaf_id not in opened:
                opened[row.leaf_id] = row.at.timestamp()
        if history.project in projects:
            raise ValueError(f"context_of: two histories of project {history.project}")
        projects[history.project] = ProjectContext(opened, history.use, object_credits(history.resolutions))
    return Context(projects)


def cost_pairs(attempts: Sequence[Attempt], *, moves: bool = False) -> tuple[list[tuple[float, float]], int]:
    """(usd, accepted objects or moves) per attempt that disclosed usd, and how many did not (or
    whose accepted objects are unknown: rows written before the ledger recorded them)."""
    # Comprehensions, not one loop with appends: this runs over every agent submission of the
    # platform (skill versions) and of each project (hypothesis moves).
    if moves:
        pairs = [(row.usd, float(row.accepted and row.kind in EVIDENCE_KINDS)) for row in attempts
                 if row.usd is not None]
    else:
        pairs = [(row.usd, float(len(row.objects or ())) if row.accepted else 0.0) for row in attempts
                 if row.usd is not None and (row.objects is not None or not row.accepted)]
    return pairs, len(attempts) - len(pairs)


Unit = tuple[float, float, float, float, float, float, float, float]
Counts = tuple[int, int, int, int, int, int, int, int, int]
UNIT_COLUMNS = 8
COUNT_COLUMNS = 9
_NOTHING: Unit = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
_REJECTED_UNDISCLOSED: Counts = (0, 0, 0, 0, 0, 0, 0, 0, 0)
_REJECTED_DISCLOSED: Counts = (0, 1, 0, 0, 0, 0, 0, 0, 0)


def facts_of(row: Attempt, context: Context) -> tuple[Unit, Counts]:
    """One agent submission's share of the leaf metrics, worked out once, as plain tuples (made for
    every submission of the platform). The unit is what the bootstrap resamples: (usd, objects it
    paid for) when usd is known, (seconds to accept, 1) when accepted after a known claim or
    opening, (Σ U, scored objects), and (usd, a hypothesis move) when usd is known, for the
    project's cost per move (`move_sums`). The counts are what leaf_metrics totals: accepted, cost
    disclosed, objects, objects unknown, right (objects with positive resolution credit), judged
    (nonzero credit), timed, scored objects, timed from the agent's claim (else, when timed, from
    the leaf's opening)."""
    if not row.accepted:  # the common short road: it paid (when it said what) and brought nothing
        usd = row.usd
        if usd is None:
            return _NOTHING, _REJECTED_UNDISCLOSED
        return (usd or 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, usd or 0.0, 0.0), _REJECTED_DISCLOSED
    objects_unknown = row.objects is None
    found = () if row.objects is None else row.objects
    cost_known = row.usd is not None and not objects_unknown
    usd, paid = (row.usd or 0.0, float(len(found))) if cost_known else (0.0, 0.0)
    seconds, timed = 0.0, 0.0
    local = context.of(row.project)
    from_claim = row.claimed_at is not None
    if row.claimed_at is not None:
        start: float | None = row.claimed_at.timestamp()
    else:
        start = local.opened.get(row.leaf_id or "")
    if start is not None:
        seconds, timed = max(0.0, row.at.timestamp() - start), 1.0
    uses = [use for use in map(local.use.get, found) if use is not None]
    right = judged = 0
    if local.credit:  # most projects have few decided links: most rows skip this
        for credit in map(local.credit.get, found):
            if credit:
                right += credit > 0
                judged += 1
    disclosed = row.usd is not None
    moved = float(disclosed and row.kind in EVIDENCE_KINDS)
    return ((usd, paid, seconds, timed, math.fsum(uses), float(len(uses)), (row.usd or 0.0) if disclosed else 0.0,
             moved),
            (1, int(cost_known), len(found), int(objects_unknown), right, judged, int(timed), len(uses),
             int(from_claim)))


def leaf_metrics(units: np.ndarray, counts: Sequence[int], sums: np.ndarray) -> dict[str, Any]:
    """The five per-kind/per-model metrics over one group of agent submissions: their units, the
    group's totals of their counts (facts_of) and the units' resampled sums (`resampled_sums`, or
    `stratified_sums` for the platform). Cost, time and use share one bootstrap over attempts, so
    an attempt's objects are resampled together."""
    (cost, low_c, high_c), (time, low_t, high_t), (use, low_u, high_u) = ratios_of_sums(
        column_totals(units), sums, [(0, 1), (2, 3), (4, 5)])
    attempts = len(units)
    accepted, disclosed, objects, unknown_rows, right, judged, timed, scored, claimed = (int(c) for c in counts)
    return {
        "attempts": attempts,
        "accepted": accepted,
        "accepted_objects": objects,
        "acceptance_rate": wilson(accepted, attempts).to_json(),
        "cost_per_accepted_object_usd": Estimate(cost, disclosed, low_c, high_c, attempts - disclosed,
                                                 "bootstrap-ratio").to_json(),
        # Said which: how many were timed from the agent's claim, how many from the leaf's opening.
        "time_to_accept_s": {**Estimate(time, timed, low_t, high_t, accepted - timed, "bootstrap").to_json(),
                             "from_claim": claimed, "from_opening": timed - claimed},
        "use_per_accepted_object": Estimate(use, scored, low_u, high_u, objects - scored + unknown_rows,
                                            "bootstrap").to_json(),
        "resolution_accuracy": wilson(right, judged).to_json(),
    }


def model_of(row: Attempt) -> str:
    return row.model or UNDISCLOSED


@dataclass(frozen=True)
class Submissions:
    """One scope's agent submissions as arrays, a row each, in ledger order: what the leaf
    metrics are computed from. A project's are worked out once; the platform's are theirs joined."""

    units: np.ndarray  # n x UNIT_COLUMNS: facts_of's units
    counts: np.ndarray  # n x COUNT_COLUMNS: facts_of's counts
    kinds: tuple[str, ...]
    models: tuple[str, ...]
    accepted: np.ndarray  # n, bool

    @staticmethod
    def join(parts: Sequence[Submissions]) -> Submissions:
        if not parts:
            return Submissions(np.zeros((0, UNIT_COLUMNS)), np.zeros((0, COUNT_COLUMNS), dtype=np.int64), (), (),
                               np.zeros(0, dtype=bool))
        return Submissions(np.concatenate([p.units for p in parts]).reshape(-1, UNIT_COLUMNS),
                           np.concatenate([p.counts for p in parts]).reshape(-1, COUNT_COLUMNS),
                           tuple(label for p in parts for label in p.kinds),
                           tuple(label for p in parts for label in p.models),
                           np.concatenate([p.accepted for p in parts]).astype(bool))


def submissions_of(attempts: Sequence[Attempt], context: Context) -> Submissions:
    """The agent submissions among `attempts` as arrays: each row's facts_of, worked out a column
    at a time (one pass over the rows per column, the arithmetic in numpy) rather than a tuple
    per row; the fast-path test holds the two to one document."""
    rows = [row for row in attempts if row.is_agent_submission]
    n = len(rows)
    accepted = np.fromiter((row.accepted for row in rows), dtype=bool, count=n)
    # `or 0.0`, as facts_of: an undisclosed usd adds nothing, and a -0.0 adds a 0.0.
    usd = np.fromiter((row.usd or 0.0 for row in rows), dtype=np.float64, count=n)
    disclosed = np.fromiter((row.usd is not None for row in rows), dtype=bool, count=n)
    taken = [row for row in rows if row.accepted]
    found = [row.objects for row in taken]
    k = len(taken)
    unknown = np.fromiter((objects is None for objects in found), dtype=bool, count=k)
    sizes = np.fromiter((len(objects or ()) for objects in found), dtype=np.int64, count=k)
    at = np.fromiter((row.at.timestamp() for row in taken), dtype=np.float64, count=k)
    claimed = np.fromiter((row.claimed_at is not None for row in taken), dtype=bool, count=k)
    locals_ = [context.of(row.project) for row in taken]
    # From the agent's claim, else the leaf's opening; NaN: neither is known.
    start = np.fromiter((row.claimed_at.timestamp() if row.claimed_at is not None
                         else local.opened.get(row.leaf_id or "", math.nan)
                         for row, local in zip(taken, locals_, strict=True)), dtype=np.float64, count=k)
    uses = [[use for use in map(local.use.get, objects or ()) if use is not None]
            for objects, local in zip(found, locals_, strict=True)]
    credits = [(0, 0) if not local.credit or not objects else _right_and_judged(objects, local.credit)
               for objects, local in zip(found, locals_, strict=True)]
    timed = ~np.isnan(start)
    cost_known = disclosed.copy()
    cost_known[accepted] &= ~unknown
    units = np.zeros((n, UNIT_COLUMNS), dtype=np.float64)
    units[:, 0] = np.where(cost_known, usd, 0.0)
    units[:, 6] = usd  # 0.0 where undisclosed
    units[:, 7] = disclosed & accepted & np.fromiter((row.kind in EVIDENCE_KINDS for row in rows), dtype=bool,
                                                     count=n)
    taken_units = units[accepted]
    taken_units[:, 1] = np.where(cost_known[accepted], sizes, 0)
    taken_units[:, 2] = np.where(timed, np.maximum(0.0, at - np.where(timed, start, at)), 0.0)
    taken_units[:, 3] = timed
    taken_units[:, 4] = np.fromiter((math.fsum(values) for values in uses), dtype=np.float64, count=k)
    scored = np.fromiter((len(values) for values in uses), dtype=np.int64, count=k)
    taken_units[:, 5] = scored
    units[accepted] = taken_units
    counts = np.zeros((n, COUNT_COLUMNS), dtype=np.int64)
    counts[:, 1] = cost_known
    taken_counts = np.zeros((k, COUNT_COLUMNS), dtype=np.int64)
    taken_counts[:, 0] = 1
    taken_counts[:, 1] = cost_known[accepted]
    taken_counts[:, 2] = sizes
    taken_counts[:, 3] = unknown
    taken_counts[:, 4:6] = np.asarray(credits, dtype=np.int64).reshape(k, 2)
    taken_counts[:, 6] = timed
    taken_counts[:, 7] = scored
    taken_counts[:, 8] = claimed
    counts[accepted] = taken_counts
    return Submissions(units, counts, tuple(row.kind or "" for row in rows), tuple(model_of(row) for row in rows),
                       accepted)


def _right_and_judged(objects: tuple[str, ...], credit: Mapping[str, int]) -> tuple[int, int]:
    right = judged = 0
    for value in map(credit.get, objects):
        if value:
            right += value > 0
            judged += 1
    return right, judged


def _codes(labels: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """The distinct labels, sorted, and each row's position among them."""
    names = sorted(set(labels))
    number = {name: code for code, name in enumerate(names)}
    return names, np.fromiter((number[label] for label in labels), dtype=np.int64, count=len(labels))


@dataclass(frozen=True)
class Scope:
    """One project's leaf metrics, and each of its groups' resampled sums ("kind/extract" ->
    resamples x UNIT_COLUMNS), which the scopes stratified over it reuse: the platform's groups
    (strata: the projects) and the project's cost per hypothesis move (strata: the kinds)."""

    document: dict[str, Any]
    sums: Mapping[str, np.ndarray]
    attempts: int  # the project's agent submissions

    def move_sums(self) -> np.ndarray | None:
        """Resampled (Σ usd disclosed, Σ moves) of the project's agent submissions, stratified
        by kind; None with no submissions."""
        kinds = [sums[:, 6:8] for group, sums in self.sums.items() if group.startswith("kind/")]
        return stratified_sums(kinds, resamples_for(self.attempts)) if kinds else None


def project_scope(submissions: Submissions, scope: str) -> Scope:
    """Leaf metrics per kind and per model over one project's agent submissions already worked
    out, and the acceptance rate per kind crossed with model (`by_kind_and_model`: only the rate
    is crossed, as most cells are too small to read a cost or time from, and each would be one more
    bootstrap); each group's units resampled among themselves, seeded by
    "<project>/<kind or model>/<label>"."""
    drawn: dict[str, np.ndarray] = {}

    def draw(group: str, units: np.ndarray) -> np.ndarray:
        drawn[group] = resampled_sums(units, f"{scope}/{group}")
        return drawn[group]

    return Scope(_scope_metrics(submissions, draw, ordered=True), drawn, len(submissions.kinds))


def platform_metrics(submissions: Submissions, projects: Sequence[Scope]) -> dict[str, Any]:
    """`by_kind_and_model` over the platform (its projects' submissions joined), each group's
    interval stratified by project: resample r of a group is the sum of resample r of that group
    in each project that has it. A project's attempts are resampled among themselves, as its own
    intervals are (the projects are given, not drawn), and the platform draws nothing of its own."""

    def draw(group: str, units: np.ndarray) -> np.ndarray:
        return stratified_sums([project.sums[group] for project in projects if group in project.sums],
                               resamples_for(len(units)))

    return _scope_metrics(submissions, draw, ordered=False)


def _scope_metrics(submissions: Submissions, draw: Callable[[str, np.ndarray], np.ndarray], *,
                   ordered: bool) -> dict[str, Any]:
    """The scope's groups by kind and by model, each group's resampled sums from `draw(group,
    units)`; `ordered`: the units are resampled here, so put in their canonical order first."""
    kinds, kind_codes = _codes(submissions.kinds)
    models, model_codes = _codes(submissions.models)
    # One canonical order for every group: by the unit's values, which do not depend on the order
    # rows landed in (rows with equal units are interchangeable).
    order = canonical_order(submissions.units) if ordered else np.arange(len(submissions.kinds))
    units, counts = submissions.units[order], submissions.counts[order]

    def metrics(names: list[str], codes: np.ndarray, name: str) -> dict[str, Any]:
        placed = codes[order]
        out: dict[str, Any] = {}
        for code, label in enumerate(names):
            index = np.flatnonzero(placed == code)  # ascending: the canonical order is kept
            group = units[index]
            out[label] = leaf_metrics(group, counts[index].sum(axis=0).tolist(), draw(f"{name}/{label}", group))
        return out

    # Crossed: one count per (kind, model) cell, cells numbered kind-major in sorted label order.
    cells = kind_codes * len(models) + model_codes
    size = len(kinds) * len(models)
    attempts = np.bincount(cells, minlength=size).tolist()
    accepted = np.bincount(cells[submissions.accepted], minlength=size).tolist()
    crossed: dict[str, dict[str, Any]] = {}
    for k, kind in enumerate(kinds):
        for m, model in enumerate(models):
            n, a = attempts[k * len(models) + m], accepted[k * len(models) + m]
            if n:
                crossed.setdefault(kind, {})[model] = {"attempts": n, "accepted": a,
                                                        "acceptance_rate": wilson(a, n).to_json()}
    return {"by_kind": metrics(kinds, kind_codes, "kind"), "by_model": metrics(models, model_codes, "model"),
            "by_kind_and_model": crossed}


def reviewer_catch_rate(resolutions: Iterable[ResolvedHypothesis]) -> Estimate:
    """Rejecting reviews that resolution confirmed (the link would have lost credit) over the
    rejecting reviews resolution could judge (would-have credit not 0)."""
    confirmed = judged = 0
    for resolved in resolutions:
        links = {link.link_id: link for link in resolved.links}
        for review in resolved.reviews:
            link = links.get(review.link_id)
            if review.decision != "reject" or link is None:
                continue
            credit = would_have_credit(link, resolved.resolution.outcome)
            if credit != 0:
                judged += 1
                confirmed += credit < 0
    return wilson(confirmed, judged)


def project_metrics(history: ProjectHistory, attempts: Sequence[Attempt], resolutions: Sequence[ResolvedHypothesis],
                    move_sums: np.ndarray | None) -> dict[str, Any]:
    """The per-project metrics; `move_sums`: the cost per move's resampled sums, stratified by
    kind from the project's leaf metrics (`Scope.move_sums`)."""
    submissions = [row for row in attempts if row.action in ("submit", "human")]
    stale = sum(1 for row in submissions if row.reason_code == STALE)
    agent = [row for row in attempts if row.is_agent_submission]
    pairs, undisclosed = cost_pairs(agent, moves=True)
    totals = [math.fsum(usd for usd, _ in pairs), math.fsum(move for _, move in pairs)]
    move, low, high = (None, None, None) if move_sums is None else ratios_of_sums(totals, move_sums, [(0, 1)])[0]
    unresolved = history.unresolved_count
    if unresolved is None:
        unresolved = sum(1 for r in history.resolutions if r.resolution.outcome == "unresolved")
    return {
        "attempts": len(submissions),
        "conflict_rate": wilson(stale, len(submissions)).to_json(),
        "reviewer_catch_rate": reviewer_catch_rate(resolutions).to_json(),
        "unresolved_count": unresolved,
        # Active hypotheses with no sealed baseline: out of lift until sealed (`rw seal`), and why.
        "unsealed_baselines": len(history.unsealed),
        "unsealed": [{"hypothesis_id": h, "why": why} for h, why in history.unsealed],
        "hypothesis_moves": sum(1 for row in agent if row.accepted and row.kind in EVIDENCE_KINDS),
        "cost_per_hypothesis_move_usd": Estimate(move, len(pairs), low, high, undisclosed,
                                                 "bootstrap-ratio").to_json(),
    }


def acceptance_over_time(attempts: Iterable[Attempt], *, origin: float, width_s: float) -> dict[str, list[list[Any]]]:
    """Per kind, [bucket start (epoch s), accepted, attempts] for each bucket of `width_s` seconds
    counted from `origin`, in time order (the report's first plot)."""
    tallies: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for row in attempts:
        if row.is_agent_submission:
            bucket = math.floor((row.at.timestamp() - origin) / width_s)
            tally = tallies[row.kind or ""][bucket]
            tally[0] += row.accepted
            tally[1] += 1
    return {kind: [[origin + bucket * width_s, k, n] for bucket, (k, n) in sorted(buckets.items())]
            for kind, buckets in sorted(tallies.items())}
