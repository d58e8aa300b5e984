"""The git host over the network: the same compare-and-swap landings as
tests/deploy/test_project_on_a_git_host.py, against git's own server (`git daemon --export-all
--enable=receive-pack` on a loopback port) instead of a file:// remote."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.git_hosts import assert_a_host_moved_before_the_push_loses, git, host_tip
from tests.support.servers import git_daemon
from tests.support.world import SLUG, World
from verifier.deploy.hosting import attach_remote
from verifier.errors import HistoryBrokenError, RetryableError
from verifier.store.remote import remote_tip

pytestmark = pytest.mark.slow  # a real git daemon


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A bare repository served by git daemon: (its path on disk, its git:// URL)."""
    base = tmp_path / "served"
    bare = base / "project.git"
    git("init", "--bare", "--initial-branch=main", str(bare))
    with git_daemon(base) as prefix:
        yield bare, f"{prefix}/project.git"



def test_every_landing_is_pushed_through_git_daemon(world: World, served: tuple[Path, str]) -> None:
    bare, url = served
    assert attach_remote(world.home, SLUG, url) == world.tip()
    world.leaf("extract-1")
    assert world.submit(world.extract("extract-1")).outcome == "accepted"
    assert host_tip(bare) == world.tip()
    assert remote_tip(world.repo.path, url) == world.tip()


def test_a_daemon_host_moved_by_someone_else_is_refused(world: World, served: tuple[Path, str],
                                                         tmp_path: Path) -> None:
    bare, url = served
    attach_remote(world.home, SLUG, url)
    world.leaf("extract-1")
    before = world.tip()
    clone = tmp_path / "someone"
    git("clone", "-q", url, str(clone))
    (clone / "foreign.md").write_text("not through the verifier\n")
    git("add", "foreign.md", cwd=clone)
    git("-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "foreign", cwd=clone)
    git("push", "-q", "origin", "main", cwd=clone)  # through the daemon too
    foreign = host_tip(bare)
    with pytest.raises(HistoryBrokenError, match="git host"):
        world.submit(world.extract("extract-1"))
    assert world.tip() == before and host_tip(bare) == foreign


def test_a_daemon_host_moved_between_the_check_and_the_push_loses_the_race(
        world: World, served: tuple[Path, str]) -> None:
    bare, url = served
    assert_a_host_moved_before_the_push_loses(world, bare, url)


def test_a_stopped_daemon_is_retried_and_the_retry_lands_once(world: World, tmp_path: Path) -> None:
    base = tmp_path / "served"
    bare = base / "project.git"
    git("init", "--bare", "--initial-branch=main", str(bare))
    with git_daemon(base) as prefix:
        url = f"{prefix}/project.git"
        attach_remote(world.home, SLUG, url)
        world.leaf("extract-1")
    before = world.tip()
    with pytest.raises(RetryableError, match="nothing was kept"):  # nothing listens on the port now
        world.submit(world.extract("extract-1"))
    assert world.tip() == before and host_tip(bare) == before
