"""A project on a git host: every landing is a compare-and-swap push of the branch. A host moved by
someone else → nothing acknowledged and the project refuses writes; a host that cannot be reached
→ retryable, nothing kept, and the retry lands exactly once. The host is a real bare repository
reached by git over file://."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.git_hosts import assert_a_host_moved_before_the_push_loses, git, host_tip
from tests.support.world import SLUG, World
from verifier.cli.app import cli
from verifier.cli.main import COMMAND_MODULES
from verifier.deploy.hosting import attach_remote
from verifier.deploy.publishing import pushing_path, read_record
from verifier.errors import ConflictError, HistoryBrokenError, RetryableError
from verifier.store.remote import remote_tip
from verifier.wiring import open_home

pytestmark = pytest.mark.slow  # real git pushes to a host repository

assert COMMAND_MODULES  # every command registered on `cli`



def _host(tmp_path: Path) -> tuple[Path, str]:
    bare = tmp_path / "host" / "project.git"
    git("init", "--bare", "--initial-branch=main", str(bare))
    return bare, f"file://{bare}"



def _ledger_rows(bare: Path) -> int:
    return len(git("--git-dir", str(bare), "log", "--format=%s", "refs/heads/main").splitlines())


def test_every_landing_is_pushed_to_the_host(world: World, tmp_path: Path) -> None:
    bare, url = _host(tmp_path)
    assert attach_remote(world.home, SLUG, url) == world.tip()
    world.leaf("extract-1")
    verdict = world.submit(world.extract("extract-1"))
    assert verdict.outcome == "accepted"
    assert host_tip(bare) == world.tip()
    assert remote_tip(world.repo.path, url) == world.tip()


def test_a_host_moved_by_someone_else_is_refused_and_nothing_acknowledged(world: World, tmp_path: Path) -> None:
    bare, url = _host(tmp_path)
    attach_remote(world.home, SLUG, url)
    world.leaf("extract-1")
    before_local, before_rows = world.tip(), _ledger_rows(bare)
    clone = tmp_path / "someone"
    git("clone", "-q", url, str(clone))
    (clone / "foreign.md").write_text("not through the verifier\n")
    git("add", "foreign.md", cwd=clone)
    git("-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "foreign", cwd=clone)
    git("push", "-q", "origin", "main", cwd=clone)
    foreign = host_tip(bare)
    with pytest.raises(HistoryBrokenError, match="git host"):
        world.submit(world.extract("extract-1"))
    assert world.tip() == before_local  # nothing landed here
    assert host_tip(bare) == foreign and _ledger_rows(bare) == before_rows + 1  # nor there
    with pytest.raises(HistoryBrokenError):  # and it keeps refusing until a person repairs
        world.submit(world.extract("extract-1"))


def test_a_host_moved_between_the_check_and_the_push_loses_the_race(world: World, tmp_path: Path) -> None:
    bare, url = _host(tmp_path)
    assert_a_host_moved_before_the_push_loses(world, bare, url)


def test_an_unreachable_host_is_retried_and_the_retry_lands_once(world: World, tmp_path: Path) -> None:
    bare, url = _host(tmp_path)
    attach_remote(world.home, SLUG, url)
    world.leaf("extract-1")
    before, rows = world.tip(), _ledger_rows(bare)
    away = bare.with_name("away.git")
    bare.rename(away)
    with pytest.raises(RetryableError, match="nothing was kept"):
        world.submit(world.extract("extract-1"))
    assert world.tip() == before
    away.rename(bare)
    assert world.submit(world.extract("extract-1")).outcome == "accepted"
    assert host_tip(bare) == world.tip()
    assert _ledger_rows(bare) == rows + 2  # one contribution commit and its ledger commit, once


def test_a_host_with_another_branch_is_not_attached(world: World, tmp_path: Path) -> None:
    _, url = _host(tmp_path)
    clone = tmp_path / "other"
    git("init", "-q", "--initial-branch=main", str(clone))
    (clone / "x").write_text("x\n")
    git("add", "x", cwd=clone)
    git("-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "x", cwd=clone)
    git("push", "-q", url, "main", cwd=clone)
    with pytest.raises(ConflictError, match="already has a main branch"):
        attach_remote(world.home, SLUG, url)
    assert world.home.settings.backends.remotes == {}


class _Killed(BaseException):
    """Stands for kill -9 at a crash point: nothing after it runs."""


def _kill_at(world: World, step: str) -> None:
    def hook(at: str) -> None:
        if at == step:
            world.home.crash_point = lambda _at: None
            raise _Killed(step)
    world.home.crash_point = hook


@pytest.mark.parametrize("step", ["pushed", "anchor"])
def test_a_writer_stopped_after_its_push_is_caught_up_with_the_host(world: World, tmp_path: Path,
                                                                    step: str) -> None:
    bare, url = _host(tmp_path)
    attach_remote(world.home, SLUG, url)
    world.leaf("extract-1")
    before = world.tip()
    _kill_at(world, step)  # after the host took the push, before main (pushed) or the anchor (anchor) moved
    with pytest.raises(_Killed):
        world.submit(world.extract("extract-1"))
    pushed = host_tip(bare)
    assert pushed != before
    if step == "pushed":  # the unfinished push says where the host went
        assert read_record(pushing_path(world.home, SLUG)) is not None and world.tip() == before
    else:  # main moved one landing, the anchor did not: the history check catches that up by itself
        anchor = world.home.read_anchor(SLUG)
        assert world.tip() == pushed and anchor is not None and anchor.commit == before
    world.leaf("extract-2")  # the next landing catches up with the host, then lands on top, once
    assert host_tip(bare) == world.tip() and str(world.repo.commit(world.tip()).parents[0].id) == pushed
    assert world.home.read_next_anchor(SLUG) is None
    anchor = world.home.read_anchor(SLUG)
    assert anchor is not None and anchor.commit == world.tip()


def test_a_writer_stopped_before_its_push_leaves_nothing_on_the_host(world: World, tmp_path: Path) -> None:
    bare, url = _host(tmp_path)
    attach_remote(world.home, SLUG, url)
    world.leaf("extract-1")
    before = world.tip()
    _kill_at(world, "branch")
    with pytest.raises(_Killed):
        world.submit(world.extract("extract-1"))
    assert host_tip(bare) == before == world.tip()
    world.leaf("extract-2")  # what the killed writer staged is published with it (nothing was acknowledged)
    assert host_tip(bare) == world.tip() and world.home.read_next_anchor(SLUG) is None


def test_rw_host_puts_the_branch_on_the_host(world: World, tmp_path: Path) -> None:
    bare, url = _host(tmp_path)
    done = CliRunner().invoke(cli, ["host", SLUG, url], env={"RW_HOME": str(world.home.root)},
                              catch_exceptions=False)
    assert done.exit_code == 0 and "compare-and-swap" in done.output, done.output
    assert host_tip(bare) == world.tip()
    assert open_home(world.home.root).settings.backends.remotes == {SLUG: url}
    again = CliRunner().invoke(cli, ["host", SLUG, f"file://{tmp_path / 'nowhere.git'}"],
                               env={"RW_HOME": str(world.home.root)})
    assert again.exit_code != 0 and "cannot be read" in again.output, again.output
