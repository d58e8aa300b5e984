"""People's pushes and `rw submit`s racing on one project (real git clients, real `rw` processes,
a cloner cloning throughout): each lands whole or is refused cleanly, main never points at an
object the store lacks (git's receive quarantine included), and no push trips over another's
refs/for/main. `RW_PUSH_RACE_ROUNDS` sets the long variant's rounds (default 10; the acceptance run is 50)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.git import clone, commit_file, git, push_for_review
from tests.support.push_race import race
from tests.support.world import NOW, SLUG, World

# Real `rw` processes, a real service or real git pushes: end to end, so in the slow set.
pytestmark = pytest.mark.slow


def test_pushes_and_submissions_racing_each_land_whole_or_are_refused_cleanly(world: World, tmp_path: Path) -> None:
    token = world.home.identities.add("ericxtang", "stew-op", "human", NOW)
    assert race(world.home, SLUG, token, tmp_path, rounds=2) == []


@pytest.mark.slow
def test_pushes_and_submissions_race_cleanly_round_after_round(world: World, tmp_path: Path) -> None:
    token = world.home.identities.add("ericxtang", "stew-op", "human", NOW)
    rounds = int(os.environ.get("RW_PUSH_RACE_ROUNDS", "10"))  # the acceptance run: RW_PUSH_RACE_ROUNDS=50
    assert race(world.home, SLUG, token, tmp_path, rounds=rounds) == []


def test_what_a_push_lands_is_in_the_object_store_before_git_takes_the_push(world: World, tmp_path: Path) -> None:
    """Clone from inside the pre-receive hook, right after the landing and before git moves the
    pushed objects out of its quarantine: the clone must find every object main reaches."""
    token = world.home.identities.add("ericxtang", "stew-op", "human", NOW)
    hook = world.repo.path / "hooks" / "pre-receive"
    writers_hook = hook.read_text()
    *setup, landing = writers_hook.splitlines()[1:]  # the hook finds its home, then runs the landing
    landing = landing.replace("exec ", "", 1)
    inside = tmp_path / "inside"
    hook.write_text("#!/bin/sh\n" + "".join(f"{line}\n" for line in setup) + f"{landing} || exit 1\n"
                    "env -u GIT_DIR -u GIT_QUARANTINE_PATH -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES "
                    f"git clone -q \"file://$PWD\" {inside} >&2 || {{ echo CLONE FAILED >&2; exit 1; }}\n")
    try:
        work = clone(world.repo.path, tmp_path / "work")
        commit_file(work, "notes/inside.md", "# landed before git took the push\n", "a note")
        result = push_for_review(work, token)
    finally:
        hook.write_text(writers_hook)
    assert result.returncode == 0 and "CLONE FAILED" not in result.stderr, result.stderr
    assert (inside / "notes" / "inside.md").read_text() == "# landed before git took the push\n"
    assert git(inside, "rev-parse", "HEAD").stdout.strip() == world.tip()
