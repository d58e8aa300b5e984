"""A repository's loose objects are packed in the background once there are enough of them
(verifier.store.upkeep), with real git: nothing a ref reaches is lost, landings beside a pass
stay whole, one pass runs per repository at a time (across processes too), and a writer leaves a
live pass's pack alone."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.support.world import NOW, SLUG, World
from verifier.audits.audit import verify_ledger
from verifier.constants import UPKEEP_TIMEOUT_S
from verifier.formats.entries import LeafEntry
from verifier.pipeline.writer import ProjectWriter, clean_leftovers
from verifier.state.layout import leaf_path
from verifier.store.gitrepo import VERIFIER, ProjectRepo
from verifier.store.upkeep import Upkeep, loose_estimate


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True)
    return done.stdout


def _loose(repo: Path) -> int:
    counts = dict(line.split(": ") for line in _git(repo, "count-objects", "-v").splitlines())
    return int(counts["count"])


def _repository_of_blobs(path: Path, blobs: int) -> tuple[ProjectRepo, str]:
    """A repository whose one commit reaches `blobs` loose blobs (object ids are uniform, so
    objects/17, the folder the estimate samples, holds about blobs / 256 of them)."""
    repo = ProjectRepo.create(path)
    writes: dict[str, bytes | None] = {f"files/{n // 100:03d}/{n}.txt": f"file {n}\n".encode() for n in range(blobs)}
    tree = repo.build_tree(None, writes)
    tip = repo.create_commit(tree=tree, parents=[], author=VERIFIER, committer=VERIFIER, message="m", when=NOW)
    repo.move_branch(tip, None)
    return repo, tip


def test_a_repository_past_the_threshold_is_packed_and_reads_the_same(tmp_path: Path) -> None:
    repo, tip = _repository_of_blobs(tmp_path / "p.git", 3000)
    before = repo.view(tip).read("files/012/1234.txt")
    upkeep = Upkeep(threshold=1000)
    assert loose_estimate(repo.path) > 1000
    assert upkeep.published(repo.path)
    assert upkeep.wait_idle(timeout=120)
    assert upkeep.passes == 1
    assert _loose(repo.path) == 0  # every loose object went into a pack
    assert loose_estimate(repo.path) == 0
    _git(repo.path, "fsck", "--full", "--no-dangling")  # raises if anything a ref reaches is missing
    assert repo.view(tip).read("files/012/1234.txt") == before == b"file 1234\n"
    assert ProjectRepo(repo.path).view(tip).read("files/029/2999.txt") == b"file 2999\n"


def test_under_the_threshold_nothing_runs(tmp_path: Path) -> None:
    repo, _ = _repository_of_blobs(tmp_path / "p.git", 300)
    upkeep = Upkeep()  # the default threshold, far above 300 objects
    assert not upkeep.published(repo.path)
    assert upkeep.wait_idle(timeout=0) and upkeep.passes == 0
    assert _loose(repo.path) > 300


def test_one_pass_runs_per_repository_at_a_time(tmp_path: Path) -> None:
    repo, _ = _repository_of_blobs(tmp_path / "p.git", 6000)
    upkeep = Upkeep(threshold=100)
    assert upkeep.published(repo.path)
    assert not upkeep.published(repo.path)  # the first pass is still running
    assert upkeep.wait_idle(timeout=120)
    assert upkeep.passes == 1
    assert not upkeep.published(repo.path)  # nothing loose is left to pack


def test_landings_beside_packing_passes_lose_nothing(world: World) -> None:
    home = world.home
    home.upkeep = upkeep = Upkeep(threshold=0)  # the writer's own trigger too, whenever objects/17 holds one
    repo_path = home.repo_path(SLUG)
    stop = threading.Event()

    def keep_packing() -> None:  # passes back to back, so landings meet them at every step
        while not stop.is_set():
            upkeep.pack(repo_path)
            upkeep.wait_idle(timeout=60)

    packer = threading.Thread(target=keep_packing)
    packer.start()
    landed: list[str] = []
    try:
        # At least 40 landings, and on until two passes (at low priority) have run beside them,
        # however loaded the machine is.
        while len(landed) < 40 or (upkeep.passes < 2 and len(landed) < 400):
            leaf_id = f"leaf-{len(landed):04d}"
            with ProjectWriter.open(home, SLUG) as writer:
                done = writer.land(LeafEntry(at=NOW, leaf_id=leaf_id, kind="extract", actor="planner",
                                             actor_type="planner", description=f"leaf {leaf_id} written"),
                                   bookkeeping={leaf_path(leaf_id): f"leaf_id: {leaf_id}\n".encode()})
            landed.append(done.tip)
    finally:
        stop.set()
        packer.join(timeout=120)
    assert upkeep.wait_idle(timeout=120)
    assert upkeep.passes >= 1
    repo = ProjectRepo(repo_path)
    assert repo.tip() == landed[-1]
    assert all(repo.is_ancestor(tip, landed[-1]) for tip in landed)
    assert verify_ledger(repo, home.read_anchor(SLUG)).problems == []
    last = f"leaf-{len(landed) - 1:04d}"
    assert repo.view(landed[-1]).read(leaf_path(last)) == f"leaf_id: {last}\n".encode()
    _git(repo_path, "fsck", "--full", "--no-dangling")


def test_without_git_nothing_is_packed_and_it_is_said_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    repo, _ = _repository_of_blobs(tmp_path / "p.git", 3000)
    empty = tmp_path / "no-git"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    upkeep = Upkeep(threshold=100)
    with caplog.at_level(logging.WARNING, logger="verifier.store.upkeep"):
        assert not upkeep.published(repo.path)
        assert not upkeep.published(repo.path)
    assert [record.getMessage() for record in caplog.records] == [
        f"git is not installed: loose objects in {repo.path} are not packed"]
    assert upkeep.passes == 0


def test_a_writer_leaves_a_running_pass_its_temporary_pack(world: World) -> None:
    repo_path = world.home.repo_path(SLUG)
    live = repo_path / "objects" / "pack" / "tmp_pack_live"
    old = repo_path / "objects" / "pack" / "tmp_pack_left"
    live.write_bytes(b"PACK")
    old.write_bytes(b"PACK")
    long_ago = time.time() - UPKEEP_TIMEOUT_S - 60
    os.utime(old, (long_ago, long_ago))
    removed = clean_leftovers(world.home, SLUG, repo_path)
    assert str(old) in removed and not old.exists()
    assert live.exists()


def test_a_pass_leaves_a_repository_another_process_is_packing_to_it(tmp_path: Path) -> None:
    repo, _ = _repository_of_blobs(tmp_path / "p.git", 3000)
    upkeep = Upkeep(threshold=100)
    with subprocess.Popen(  # another process holding the packing lock, until told to let go
            [sys.executable, "-c", "import fcntl, sys; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); "
             "print('held', flush=True); sys.stdin.read()", str(repo.path / "rw-upkeep.lock")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as holder:
        assert holder.stdin is not None and holder.stdout is not None
        assert holder.stdout.readline() == "held\n"
        assert upkeep.published(repo.path)
        assert upkeep.wait_idle(timeout=120)
        assert _loose(repo.path) >= 3000  # left to the lock's holder
        holder.stdin.close()
    assert upkeep.published(repo.path) and upkeep.wait_idle(timeout=120)
    assert _loose(repo.path) == 0
