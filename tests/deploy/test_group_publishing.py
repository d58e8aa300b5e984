"""A project on a git host publishes landings in groups: landings staged while one push is in
flight go out together in the next push, each is acknowledged only once the host has it, and a
push that fails takes back everything staged on it (those writers are told to try again). The host
is a real bare repository over file://, with a pre-receive hook that makes each push slow."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.git_hosts import git
from tests.support.world import SLUG, World
from verifier.deploy.hosting import attach_remote
from verifier.errors import RetryableError

pytestmark = pytest.mark.slow  # real git pushes to a host repository

THREADS = 6



def _slow_host(tmp_path: Path) -> tuple[Path, Path]:
    """A bare host whose every push takes 0.4 s and is counted; the next push is refused while
    the file `refuse-next` beside it exists (and removes it)."""
    bare = tmp_path / "host.git"
    git("init", "-q", "--bare", "--initial-branch=main", str(bare))
    pushes, refuse = tmp_path / "pushes.txt", tmp_path / "refuse-next"
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\ncat >/dev/null\nsleep 0.4\necho push >> {pushes}\n"
                    f"if [ -e {refuse} ]; then rm -f {refuse}; echo refused >&2; exit 1; fi\n")
    hook.chmod(0o755)
    return bare, pushes


def _land_together(world: World, ids: list[str]) -> dict[str, BaseException | None]:
    """Each leaf added by its own thread, all at once; what each one raised (None: acknowledged)."""
    outcome: dict[str, BaseException | None] = {}
    start = threading.Barrier(len(ids))

    def one(leaf_id: str) -> None:
        start.wait()
        try:
            world.leaf(leaf_id)
            outcome[leaf_id] = None
        except BaseException as exc:  # reported to the test
            outcome[leaf_id] = exc

    threads = [threading.Thread(target=one, args=(leaf_id,)) for leaf_id in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return outcome


def _on(world: World, rev: str, leaf_id: str) -> bool:
    return world.repo.view(rev).read(f"leaves/{leaf_id}.yaml") is not None


def test_landings_that_queue_behind_a_push_go_out_together(world: World, tmp_path: Path) -> None:
    bare, pushes = _slow_host(tmp_path)
    attach_remote(world.home, SLUG, f"file://{bare}")
    ids = [f"extract-group-{n}" for n in range(THREADS)]
    outcome = _land_together(world, ids)
    assert outcome == dict.fromkeys(ids)  # every landing acknowledged
    host = git("--git-dir", str(bare), "rev-parse", "refs/heads/main")
    assert host == world.tip() == world.repo.staged()
    assert all(_on(world, host, leaf_id) for leaf_id in ids)
    assert len(pushes.read_text().splitlines()) < THREADS  # fewer pushes than landings
    anchor = world.home.read_anchor(SLUG)
    assert anchor is not None and anchor.commit == host and world.home.read_next_anchor(SLUG) is None
    # each landing once on the host: one ledger commit per leaf
    subjects = git("--git-dir", str(bare), "log", "--format=%s", "refs/heads/main").splitlines()
    assert all(sum(subject.endswith(f" {leaf_id}") for subject in subjects) == 1 for leaf_id in ids)


def _gated_host(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A bare host whose pushes are counted and wait, each, until the file `gate` exists."""
    bare = tmp_path / "host.git"
    git("init", "-q", "--bare", "--initial-branch=main", str(bare))
    pushes, gate = tmp_path / "pushes.txt", tmp_path / "gate"
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\ncat >/dev/null\necho push >> {pushes}\n"
                    f"while [ ! -e {gate} ]; do sleep 0.02; done\n")
    hook.chmod(0o755)
    return bare, pushes, gate


def _staged_leaves(world: World) -> set[str]:
    staged = world.repo.staged()
    view = world.repo.view(staged) if staged else None
    return {name.removesuffix(".yaml") for name in (view.list_dir("leaves") if view else [])}


def test_landings_queued_behind_a_push_all_travel_in_the_one_next_push(world: World, tmp_path: Path) -> None:
    bare, pushes, gate = _gated_host(tmp_path)
    gate.write_text("open")
    attach_remote(world.home, SLUG, f"file://{bare}")
    gate.unlink()  # from now on every push waits at the host until the gate opens
    first = _start(world, "extract-first")
    _until(lambda: pushes.exists() and len(pushes.read_text().splitlines()) == 2, "the first landing's push in flight")
    queued = [f"extract-queued-{n}" for n in range(4)]
    threads = [_start(world, leaf_id) for leaf_id in queued]
    _until(lambda: set(queued) <= _staged_leaves(world), "every queued landing staged behind the push")
    gate.write_text("open")
    for thread, outcome in [first, *threads]:
        thread.join(60)
        assert outcome == [None]  # acknowledged
    # attach_remote's push, the first landing's, and one more for all four queued behind it.
    assert len(pushes.read_text().splitlines()) == 3
    host = git("--git-dir", str(bare), "rev-parse", "refs/heads/main")
    assert host == world.tip() and all(_on(world, host, leaf_id) for leaf_id in ["extract-first", *queued])


def _start(world: World, leaf_id: str) -> tuple[threading.Thread, list[BaseException | None]]:
    """Add the leaf in its own thread; the list gets what it raised (None: acknowledged)."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            world.leaf(leaf_id)
            outcome.append(None)
        except BaseException as exc:  # reported to the test
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def _until(condition: Callable[[], bool], what: str, timeout_s: float = 60.0) -> None:
    """Wait for a state (not for a time): polls until `condition` holds; fails naming `what`."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"never saw: {what}"
        time.sleep(0.02)


def test_a_refused_push_takes_back_what_was_staged_on_it(world: World, tmp_path: Path) -> None:
    bare, _ = _slow_host(tmp_path)
    attach_remote(world.home, SLUG, f"file://{bare}")
    (tmp_path / "refuse-next").write_text("x")
    before = world.tip()
    ids = [f"extract-refused-{n}" for n in range(THREADS)]
    outcome = _land_together(world, ids)
    refused = [leaf_id for leaf_id, exc in outcome.items() if exc is not None]
    assert refused and all(isinstance(outcome[leaf_id], RetryableError) for leaf_id in refused)
    host = git("--git-dir", str(bare), "rev-parse", "refs/heads/main")
    assert host == world.tip()
    for leaf_id, exc in outcome.items():  # acknowledged ⇔ on the host; refused ⇒ nowhere
        assert _on(world, host, leaf_id) == (exc is None)
    assert world.repo.staged() == world.tip() and world.repo.is_ancestor(before, host)
    for leaf_id in refused:  # and each refused one lands when tried again
        world.leaf(leaf_id)
    assert all(_on(world, world.tip(), leaf_id) for leaf_id in ids)
    assert git("--git-dir", str(bare), "rev-parse", "refs/heads/main") == world.tip()


def test_staged_landings_are_not_served_to_clones(world: World, tmp_path: Path) -> None:
    bare, _ = _slow_host(tmp_path)
    attach_remote(world.home, SLUG, f"file://{bare}")
    world.leaf("extract-served")
    refs = git("--git-dir", str(bare), "for-each-ref", "--format=%(refname)")
    assert refs.splitlines() == ["refs/heads/main"]  # the host never sees refs/rw/
