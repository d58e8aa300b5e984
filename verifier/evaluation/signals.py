"""The platform's verdicts on itself: skill versions live against validation, lift and the kill
signal (design §1, §7.4), and the steward's 12-month signal. Pure functions of plain rows.

Kill signal: pooled lift ≤ 0 across KILL_MIN_RESOLVED or more resolved hypotheses means the swarm
adds nothing a single frontier-model call does not (design §1).

12-month signal: operators the steward did not recruit personally whose agents had an accepted
submission in each of the last N weeks (N = 12 by default; weeks are the 7-day windows ending at
`now`). The design's target is ten such operators.

Skill versions: live numbers are the agent submissions whose manifest named the version (so
they come after its bump); versions are ordered by their first live row. A version is flagged
when its validation acceptance rate beats its predecessor's and its live acceptance rate falls
below its predecessor's: the validation set has gone stale.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from verifier.constants import KILL_MIN_RESOLVED
from verifier.evaluation.intervals import Estimate, bootstrap_mean, bootstrap_ratio, wilson
from verifier.evaluation.metrics import cost_pairs
from verifier.evaluation.rows import Attempt, ResolvedHypothesis, ValidationResult
from verifier.scoring.resolution import lift_term, platform_lift

TWELVE_MONTH_TARGET = 10
DEFAULT_WEEKS = 12
WEEK = timedelta(days=7)


# --- lift and the kill signal ------------------------------------------------------------------


def lift_report(by_project: Mapping[str, Sequence[ResolvedHypothesis]]) -> dict[str, Any]:
    """Lift per project and pooled (one N across projects), with a bootstrap interval over the
    pooled terms, and the kill signal stated plainly."""
    scores = platform_lift({slug: [r.resolution for r in items] for slug, items in by_project.items()})
    terms = [term for items in by_project.values() for r in items
             if (term := lift_term(r.resolution)) is not None]
    interval = bootstrap_mean(terms, "platform/lift")
    overall = scores.overall
    return {
        **scores.to_json(),
        "interval": interval.to_json()["interval"],
        "kill_line": 0.0,
        "kill_min_resolved": KILL_MIN_RESOLVED,
        "kill_signal": overall.n >= KILL_MIN_RESOLVED and overall.lift is not None and overall.lift <= 0,
        "statement": kill_statement(overall.lift, overall.n),
    }


def kill_statement(value: float | None, n: int) -> str:
    if value is None:
        return "No kill signal: no resolved hypothesis has a comparable baseline yet (lift is unknown, not 0)."
    if n < KILL_MIN_RESOLVED:
        return (f"No kill signal yet: lift {value:+.3f} across {n} resolved hypotheses; the test needs "
                f"{KILL_MIN_RESOLVED}.")
    if value <= 0:
        return (f"KILL SIGNAL: lift {value:+.3f} ≤ 0 across {n} resolved hypotheses. The swarm adds nothing "
                "that a single frontier-model call does not.")
    return f"No kill signal: lift {value:+.3f} > 0 across {n} resolved hypotheses."


# --- the 12-month signal -----------------------------------------------------------------------


def twelve_month_signal(attempts: Iterable[Attempt], *, now: datetime, recruited: Iterable[str],
                        weeks: int = DEFAULT_WEEKS) -> dict[str, Any]:
    """Week by week, the unrecruited operators whose agents had an accepted submission, and the
    operators present in every one of the last `weeks` weeks."""
    if weeks < 1:
        raise ValueError(f"weeks must be at least 1, not {weeks}")
    recruited_set = set(recruited)
    start = now - weeks * WEEK
    active: list[set[str]] = [set() for _ in range(weeks)]
    for row in attempts:
        if not (row.is_agent_submission and row.accepted and row.operator) or row.operator in recruited_set:
            continue
        if start <= row.at < now:
            active[math.floor((row.at - start) / WEEK)].add(row.operator)
    every_week = set.intersection(*active) if active else set()
    return {
        "weeks": weeks,
        "now": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "recruited_by_steward": sorted(recruited_set),
        "by_week": [{"week_start": (start + i * WEEK).strftime("%Y-%m-%d"), "operators": len(names),
                     "names": sorted(names)} for i, names in enumerate(active)],
        "operators_every_week": sorted(every_week),
        "count": len(every_week),
        "target": TWELVE_MONTH_TARGET,
        "met": len(every_week) >= TWELVE_MONTH_TARGET,
    }


# --- skill versions ----------------------------------------------------------------------------


def _validation(results: Sequence[ValidationResult]) -> dict[str, Any]:
    attempts = sum(r.attempts for r in results)
    accepted = sum(r.accepted for r in results)
    objects = [r.objects for r in results]
    usd = [r.cost.usd for r in results]
    known = [(u, o) for u, o in zip(usd, objects, strict=True) if u is not None and o is not None]
    total_objects = sum(o for _, o in known)
    # Validation results are totals per run: a ratio with its n, but nothing to resample.
    cost = Estimate(math.fsum(u for u, _ in known) / total_objects if total_objects else None,
                    attempts, excluded=len(results) - len(known), method="ratio-of-totals")
    return {"runs": len(results), "attempts": attempts, "accepted": accepted,
            "validation_sets": sorted({r.validation_set for r in results if r.validation_set}),
            "acceptance_rate": wilson(accepted, attempts).to_json(),
            "cost_per_accepted_object_usd": cost.to_json()}


def _live(rows: Sequence[Attempt], version: str) -> dict[str, Any]:
    pairs, undisclosed = cost_pairs(rows)
    accepted = sum(1 for row in rows if row.accepted)
    return {"attempts": len(rows), "accepted": accepted,
            "first_seen": min(row.at for row in rows).strftime("%Y-%m-%dT%H:%M:%SZ") if rows else None,
            "acceptance_rate": wilson(accepted, len(rows)).to_json(),
            "cost_per_accepted_object_usd": bootstrap_ratio(pairs, f"skill/{version}/cost",
                                                            excluded=undisclosed).to_json()}


def skill_versions(attempts: Iterable[Attempt], validation: Iterable[ValidationResult]) -> list[dict[str, Any]]:
    """Per skill version, validation against live, in the order versions went live (versions
    only validated, never live, come last), with the stale-validation flag."""
    live: dict[str, list[Attempt]] = defaultdict(list)
    for row in attempts:
        if row.is_agent_submission and row.skill_version:
            live[row.skill_version].append(row)
    checked: dict[str, list[ValidationResult]] = defaultdict(list)
    for result in validation:
        checked[result.skill_version].append(result)
    first = {version: min(row.at for row in rows) for version, rows in live.items()}
    order = sorted(live, key=lambda v: (first[v], v)) + sorted(set(checked) - set(live))
    out: list[dict[str, Any]] = []
    for index, version in enumerate(order):
        entry: dict[str, Any] = {"skill_version": version, "live": _live(live.get(version, []), version),
                                 "validation": _validation(checked[version]) if version in checked else None,
                                 "previous": order[index - 1] if index > 0 and version in live else None}
        entry.update(_stale_flag(entry, out[-1] if out and entry["previous"] else None))
        out.append(entry)
    return out


def _rate(block: Mapping[str, Any] | None) -> float | None:
    if block is None:
        return None
    value = block["acceptance_rate"]["value"]
    return None if value is None else float(value)


def _stale_flag(entry: Mapping[str, Any], previous: Mapping[str, Any] | None) -> dict[str, Any]:
    if previous is None:
        return {"validation_stale": False, "note": "no earlier live version to compare with"}
    now_val, was_val = _rate(entry["validation"]), _rate(previous["validation"])
    now_live, was_live = _rate(entry["live"]), _rate(previous["live"])
    if None in (now_val, was_val, now_live, was_live):
        return {"validation_stale": False, "note": "validation or live acceptance unknown for this or the "
                                                   "previous version"}
    assert now_val is not None and was_val is not None and now_live is not None and was_live is not None
    stale = now_val > was_val and now_live < was_live
    note = (f"wins on validation ({was_val:.3f} -> {now_val:.3f}) and loses live ({was_live:.3f} -> "
            f"{now_live:.3f}): the validation set has gone stale" if stale else
            f"validation {was_val:.3f} -> {now_val:.3f}, live {was_live:.3f} -> {now_live:.3f}")
    return {"validation_stale": stale, "note": note}
