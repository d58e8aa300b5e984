"""`rw git setup` in a clone over a path (file://): the person's token goes into the clone's own
`push.pushOption`, so a plain `git push origin HEAD:refs/for/main` carries it to the hook."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tests.support.cli import rw_here
from tests.support.git import clone, commit_file, git
from tests.support.world import NOW, World

pytestmark = pytest.mark.slow  # a real git push through the hooks


def test_rw_git_setup_on_a_path_remote_then_a_plain_push_lands(world: World, tmp_path: Path) -> None:
    token = world.home.identities.add("stew", "stew-op", "human", NOW)
    work = clone(world.repo.path, tmp_path / "work")
    commit_file(work, "LOCAL-NOTES.md", "# local notes\n", "notes over a path")
    done = rw_here("git", "setup", env={"RW_TOKEN": token, "RW_SERVER": ""}, cwd=work)
    assert done.returncode == 0, done.stderr
    assert token not in done.stdout + done.stderr
    assert stat.S_IMODE((work / ".git" / "config").stat().st_mode) == 0o600
    tip = world.tip()
    pushed = git(work, "push", "origin", "HEAD:refs/for/main", check=False)
    assert pushed.returncode == 0 and "ACCEPTED" in pushed.stderr, pushed.stderr
    assert world.tip() != tip and world.repo.view(world.tip()).read("LOCAL-NOTES.md") == b"# local notes\n"


def test_rw_git_setup_without_a_token_says_how_to_get_one(world: World, tmp_path: Path) -> None:
    work = clone(world.repo.path, tmp_path / "work")
    done = rw_here("git", "setup", env={"RW_TOKEN": "", "RW_SERVER": ""}, cwd=work)
    assert done.returncode == 3 and "rw join" in done.stderr
