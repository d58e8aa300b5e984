"""The controlled arm's judging (design §12): both arms, the paired difference with n and its
interval, on use score and resolution credit only. (Running the arms is not built yet.)"""

from __future__ import annotations

import pytest

from verifier.evaluation.arm import ArmRun, compare_arms


def runs() -> list[ArmRun]:
    single = [(1.0, 0.0), (2.0, 1.0), (0.5, -1.0), (1.5, 0.0)]
    swarm = [(3.0, 1.0), (2.5, 1.0), (2.0, 0.0), (3.5, 2.0)]
    out = [ArmRun(f"plan-{i}", "single", u, c) for i, (u, c) in enumerate(single)]
    out += [ArmRun(f"plan-{i}", "swarm", u, c) for i, (u, c) in enumerate(swarm)]
    return [*out, ArmRun("plan-9", "swarm", 9.0, 9.0)]  # the single arm never finished it


def test_both_arms_the_difference_and_n() -> None:
    report = compare_arms(runs())
    assert (report["plans"], report["n"], report["unpaired"]) == (5, 4, ["plan-9"])
    use = report["use_score"]
    assert use["single"]["value"] == 1.25 and use["swarm"]["value"] == 2.75 and use["single"]["n"] == 4
    assert use["difference"]["value"] == 1.5 and use["difference"]["n"] == 4
    low, high = use["difference"]["interval"]
    assert 0 < low <= 1.5 <= high  # every plan did better in the swarm: the interval stays above 0
    assert report["resolution_credit"]["difference"]["value"] == pytest.approx(1.0)
    assert compare_arms(list(reversed(runs()))) == report  # the order runs finished in does not matter


def test_bad_runs_are_refused() -> None:
    with pytest.raises(ValueError, match="appears twice"):
        compare_arms([*runs(), ArmRun("plan-0", "single", 1.0, 0.0)])
    with pytest.raises(ValueError, match="is not one of"):
        compare_arms([ArmRun("plan-0", "solo", 1.0, 0.0)])  # type: ignore[arg-type]
    assert compare_arms([])["use_score"]["difference"]["value"] is None
