"""Judging the controlled arm (design §12): the same held-out plans run two ways, one agent end to
end (`single`) and the swarm (`swarm`), compared on Layer 2 (use score) and Layer 3 (resolution
credit) only. Pure: the runs themselves happen elsewhere and hand in one row per plan and arm.

The difference is swarm − single per plan (paired: both arms ran the same plan), its mean with a
seeded bootstrap interval over plans, and n = the plans both arms finished. A plan only one arm
finished is not compared; it is counted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from verifier.evaluation.intervals import bootstrap_mean

Arm = Literal["single", "swarm"]
ARMS: tuple[Arm, ...] = ("single", "swarm")
MEASURES = ("use_score", "resolution_credit")


@dataclass(frozen=True)
class ArmRun:
    """What one arm produced for one plan, judged on its scratch copy of the project."""

    plan: str
    arm: Arm
    use_score: float  # Σ U over the objects the run brought
    resolution_credit: float  # Σ credit over them once the plan's hypotheses resolved


def compare_arms(runs: Iterable[ArmRun]) -> dict[str, Any]:
    by_plan: dict[str, dict[str, ArmRun]] = {}
    for run in runs:
        if run.arm not in ARMS:
            raise ValueError(f"plan {run.plan}: arm {run.arm!r} is not one of {ARMS}")
        if run.arm in by_plan.setdefault(run.plan, {}):
            raise ValueError(f"plan {run.plan}: the {run.arm} arm appears twice")
        by_plan[run.plan][run.arm] = run
    paired = {plan: arms for plan, arms in by_plan.items() if len(arms) == len(ARMS)}
    out: dict[str, Any] = {"plans": len(by_plan), "n": len(paired), "unpaired": sorted(set(by_plan) - set(paired))}
    for measure in MEASURES:
        block: dict[str, Any] = {}
        for arm in ARMS:
            block[arm] = bootstrap_mean([getattr(p[arm], measure) for p in paired.values()],
                                        f"arm/{measure}/{arm}").to_json()
        block["difference"] = bootstrap_mean(
            [getattr(p["swarm"], measure) - getattr(p["single"], measure) for p in paired.values()],
            f"arm/{measure}/difference").to_json()
        out[measure] = block
    return out
