"""What the tests of a project on a git host share: running git, reading the host's branch, and
the race that a host moved between the verifier's check and its push must lose (the same case
over file:// and over git daemon)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.world import SLUG, World
from verifier.deploy.hosting import attach_remote
from verifier.errors import HistoryBrokenError


def git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def host_tip(bare: Path) -> str:
    return git("--git-dir", str(bare), "rev-parse", "refs/heads/main")


def assert_a_host_moved_before_the_push_loses(world: World, bare: Path, url: str) -> None:
    """Someone moves the host's branch after the verifier's checks, before its push: the push is
    refused as a foreign move, and nothing lands on either side."""
    attach_remote(world.home, SLUG, url)
    world.leaf("extract-1")
    before = world.tip()

    def someone_pushes(step: str) -> None:
        if step == "branch":  # after the verifier read the host, before its push
            git("--git-dir", str(bare), "update-ref", "refs/heads/main", f"{before}~1")

    world.home.crash_point = someone_pushes
    with pytest.raises(HistoryBrokenError, match="moved without the verifier"):
        world.submit(world.extract("extract-1"))
    assert world.tip() == before
    assert host_tip(bare) == git("--git-dir", str(world.repo.path), "rev-parse", f"{before}~1")
