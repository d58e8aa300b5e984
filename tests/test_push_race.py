"""People's pushes and `rw submit`s racing on one project (real git clients, real `rw` processes,
a cloner cloning throughout): each lands whole or is refused cleanly, main never points at an
object the store lacks (git's receive quarantine included), and no push trips over another's
refs/for/main. `RW_PUSH_RACE_ROUNDS` sets the long variant's rounds (default 50)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .conftest import NOW, SLUG, World
from .support_push_race import race


def test_pushes_and_submissions_racing_each_land_whole_or_are_refused_cleanly(world: World, tmp_path: Path) -> None:
    token = world.home.identities.add("stew", "stew-op", "human", NOW)
    assert race(world.home, SLUG, token, tmp_path, rounds=2) == []


@pytest.mark.slow
def test_pushes_and_submissions_race_cleanly_round_after_round(world: World, tmp_path: Path) -> None:
    token = world.home.identities.add("stew", "stew-op", "human", NOW)
    rounds = int(os.environ.get("RW_PUSH_RACE_ROUNDS", "50"))
    assert race(world.home, SLUG, token, tmp_path, rounds=rounds) == []
