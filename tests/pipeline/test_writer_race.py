"""The early history check runs without the lock: a landing in flight between its reading of the
tip and of the anchor must not make a sound project look broken (a false 409 history_broken)."""

from __future__ import annotations

import pytest

from tests.support.world import SLUG, World
from verifier.errors import HistoryBrokenError
from verifier.pipeline.writer import ProjectWriter, no_crash


def test_a_tip_read_before_another_landing_looks_behind_its_anchor(world: World) -> None:
    # The hazard itself: a tip read, then a landing (branch and anchor move), then the anchor read.
    stale = ProjectWriter(world.home, SLUG, world.home.project(SLUG), crash_point=no_crash)
    world.leaf("extract-race-1")
    with pytest.raises(HistoryBrokenError):
        stale._check_history(catch_up=False)


def test_the_early_check_confirms_under_the_lock_before_it_refuses(world: World) -> None:
    world.leaf("extract-race-2")
    try:
        ProjectWriter.refuse_if_broken(world.home, SLUG)
    except HistoryBrokenError as exc:
        pytest.fail(f"a sound project was refused: {exc}")
    tip = world.tip()
    world.leaf("extract-race-3")  # and writes go on
    assert world.tip() != tip
