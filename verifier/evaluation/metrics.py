"""The design's §12 metrics as pure functions of plain rows (verifier.evaluation.rows).

Per leaf kind and per model (agent submissions only; a person's edit is not a leaf):
    acceptance rate          accepted (or held) / attempts                           Wilson
    cost per accepted object Σ usd / Σ accepted objects, over the attempts that      bootstrap
                             disclosed usd (rejected ones too: failure costs)
    time to accept           accepted row's time - the leaf's own ledger row's time  bootstrap
                             (seconds; claims are not kept in history, see docs/eval.md)
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

from verifier.evaluation.intervals import Estimate, bootstrap_ratio, bootstrap_ratios, wilson
from verifier.evaluation.rows import EVIDENCE_KINDS, UNDISCLOSED, Attempt, ProjectHistory, ResolvedHypothesis
from verifier.scoring.resolution import earned_credit, would_have_credit

STALE = "stale"


@dataclass(frozen=True)
class Context:
    """What the per-attempt metrics look up: when each leaf was written, each object's use, and
    each object's resolution credit, all keyed by (project, id)."""

    opened: Mapping[tuple[str, str], float]  # (project, leaf_id) -> epoch seconds of its leaf row
    use: Mapping[tuple[str, str], float]
    credit: Mapping[tuple[str, str], int]


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
    opened: dict[tuple[str, str], float] = {}
    use: dict[tuple[str, str], float] = {}
    credit: dict[tuple[str, str], int] = {}
    for history in histories:
        for row in history.rows:
            if row.action == "leaf" and row.leaf_id is not None:
                opened.setdefault((history.project, row.leaf_id), row.at.timestamp())
        use.update(((history.project, key), value) for key, value in history.use.items())
        credit.update(((history.project, key), value) for key, value in object_credits(history.resolutions).items())
    return Context(opened, use, credit)


def cost_pairs(attempts: Sequence[Attempt], *, moves: bool = False) -> tuple[list[tuple[float, float]], int]:
    """(usd, accepted objects or moves) per attempt that disclosed usd, and how many did not (or
    whose accepted objects are unknown: rows written before the ledger recorded them)."""
    pairs: list[tuple[float, float]] = []
    excluded = 0
    for row in attempts:
        if moves:
            units: float | None = float(row.accepted and row.kind in EVIDENCE_KINDS)
        else:
            units = (float(len(row.objects)) if row.objects is not None else None) if row.accepted else 0.0
        if row.usd is None or units is None:
            excluded += 1
        else:
            pairs.append((row.usd, units))
    return pairs, excluded


def _unit(row: Attempt, context: Context) -> tuple[float, float, float, float, float, float]:
    """One attempt as the bootstrap's unit: (usd, objects it is paid for) when usd is disclosed,
    (seconds to accept, 1) when accepted after a known leaf row, (Σ U, scored objects)."""
    objects = len(row.objects) if row.objects is not None else None
    usd, paid = 0.0, 0.0
    if row.usd is not None and (objects is not None or not row.accepted):
        usd, paid = row.usd, float(objects or 0) if row.accepted else 0.0
    seconds, timed = 0.0, 0.0
    opened = context.opened.get((row.project, row.leaf_id or ""))
    if row.accepted and opened is not None:
        seconds, timed = max(0.0, row.at.timestamp() - opened), 1.0
    found = row.objects if row.accepted and row.objects is not None else ()
    uses = [context.use[(row.project, o)] for o in found if (row.project, o) in context.use]
    return usd, paid, seconds, timed, math.fsum(uses), float(len(uses))


def leaf_metrics(attempts: Sequence[Attempt], context: Context, key: str) -> dict[str, Any]:
    """The five per-kind/per-model metrics over one group of agent submissions. Cost, time and
    use share one bootstrap over attempts (an attempt's objects are resampled together)."""
    accepted = [row for row in attempts if row.accepted]
    units = [_unit(row, context) for row in attempts]
    (cost, low_c, high_c), (time, low_t, high_t), (use, low_u, high_u) = bootstrap_ratios(
        units, [(0, 1), (2, 3), (4, 5)], key)
    _, undisclosed = cost_pairs(attempts)
    disclosed = len(attempts) - undisclosed
    objects = sum(len(row.objects) for row in accepted if row.objects is not None)
    unknown_rows = sum(1 for row in accepted if row.objects is None)
    timed = int(sum(unit[3] for unit in units))
    scored = int(sum(unit[5] for unit in units))
    credits = [context.credit[(row.project, o)] for row in accepted for o in row.objects or ()
               if context.credit.get((row.project, o), 0) != 0]
    return {
        "attempts": len(attempts),
        "accepted": len(accepted),
        "accepted_objects": objects,
        "acceptance_rate": wilson(len(accepted), len(attempts)).to_json(),
        "cost_per_accepted_object_usd": Estimate(cost, disclosed, low_c, high_c, undisclosed,
                                                 "bootstrap-ratio").to_json(),
        "time_to_accept_s": Estimate(time, timed, low_t, high_t, len(accepted) - timed, "bootstrap").to_json(),
        "use_per_accepted_object": Estimate(use, scored, low_u, high_u, objects - scored + unknown_rows,
                                            "bootstrap").to_json(),
        "resolution_accuracy": wilson(sum(1 for c in credits if c > 0), len(credits)).to_json(),
    }


def _group(attempts: Iterable[Attempt], by: Callable[[Attempt], str]) -> dict[str, list[Attempt]]:
    groups: dict[str, list[Attempt]] = defaultdict(list)
    for row in attempts:
        groups[by(row)].append(row)
    return groups


def model_of(row: Attempt) -> str:
    return row.model or UNDISCLOSED


def by_kind_and_model(attempts: Sequence[Attempt], context: Context, scope: str) -> dict[str, Any]:
    """Leaf metrics per kind, per model, and per (kind, model), over agent submissions."""
    submissions = [row for row in attempts if row.is_agent_submission]
    return {
        "by_kind": {kind: leaf_metrics(rows, context, f"{scope}/kind/{kind}")
                    for kind, rows in sorted(_group(submissions, lambda r: r.kind or "").items())},
        "by_model": {model: leaf_metrics(rows, context, f"{scope}/model/{model}")
                     for model, rows in sorted(_group(submissions, model_of).items())},
        "by_kind_and_model": {
            label: leaf_metrics(rows, context, f"{scope}/kind-model/{label}")
            for label, rows in sorted(_group(submissions, lambda r: f"{r.kind} / {model_of(r)}").items())},
    }


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


def project_metrics(history: ProjectHistory, attempts: Sequence[Attempt],
                    resolutions: Sequence[ResolvedHypothesis]) -> dict[str, Any]:
    submissions = [row for row in attempts if row.action in ("submit", "human")]
    stale = sum(1 for row in submissions if row.reason_code == STALE)
    agent = [row for row in attempts if row.is_agent_submission]
    pairs, undisclosed = cost_pairs(agent, moves=True)
    unresolved = history.unresolved_count
    if unresolved is None:
        unresolved = sum(1 for r in history.resolutions if r.resolution.outcome == "unresolved")
    return {
        "attempts": len(submissions),
        "conflict_rate": wilson(stale, len(submissions)).to_json(),
        "reviewer_catch_rate": reviewer_catch_rate(resolutions).to_json(),
        "unresolved_count": unresolved,
        "hypothesis_moves": sum(1 for row in agent if row.accepted and row.kind in EVIDENCE_KINDS),
        "cost_per_hypothesis_move_usd": bootstrap_ratio(pairs, f"{history.project}/move",
                                                        excluded=undisclosed).to_json(),
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
