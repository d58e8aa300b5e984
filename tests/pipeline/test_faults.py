"""Faults are retryable, never wedging: a full disk or a failed object write is a clear refusal
with its own exit code and nothing kept; what a killed writer left is cleaned by the next one."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.support.cli import rw_here
from tests.support.world import NOW, SLUG, World
from verifier.audits.audit import verify_ledger
from verifier.cli.app import EXIT_CRASH, EXIT_HISTORY, EXIT_RETRY, EXIT_USAGE, exit_code_of
from verifier.errors import HistoryBrokenError, RetryableError
from verifier.formats.entries import LeafEntry
from verifier.pipeline.writer import ProjectWriter, writing_marker


def test_a_full_disk_is_a_retryable_refusal_that_keeps_nothing(world: World) -> None:
    world.leaf("extract-1")
    submission = world.extract("extract-1")
    tip = world.tip()

    def full(step: str) -> None:
        if step == "ledger":
            raise OSError(errno.ENOSPC, "No space left on device")

    world.home.crash_point = full
    with pytest.raises(RetryableError, match="disk is full"):
        world.submit(submission)
    assert world.tip() == tip and verify_ledger(world.repo, world.home.read_anchor(SLUG)).ok
    world.home.crash_point = lambda _step: None
    assert world.submit(submission).outcome == "accepted"  # the same request, tried again


def test_errors_map_to_their_exit_codes() -> None:
    assert exit_code_of(RetryableError("disk")) == EXIT_RETRY
    assert exit_code_of(OSError(errno.ENOSPC, "full")) == EXIT_RETRY
    assert exit_code_of(HistoryBrokenError("planted")) == EXIT_HISTORY
    assert exit_code_of(KeyError("surprise")) == EXIT_CRASH


def test_leftovers_of_a_killed_writer_are_cleaned_by_the_next(world: World) -> None:
    repo = world.repo.path
    (repo / "refs" / "heads" / "main.lock").write_text("stale\n")
    (repo / "objects" / "ab").mkdir(exist_ok=True)
    (repo / "objects" / "ab" / "tmp_obj_Xy12").write_bytes(b"half")
    writing_marker(world.home, SLUG).touch()  # the writer that left them was killed while open
    anchor = world.home.anchor_path(SLUG)
    (anchor.parent / f".{anchor.name}.123.456.ab.tmp").write_text("{")
    stale, live = repo / "objects" / "incoming-old", repo / "objects" / "incoming-live"
    for quarantine in (stale, live):
        (quarantine / "ab").mkdir(parents=True)
    os.utime(stale, (time.time() - 7 * 3600, time.time() - 7 * 3600))  # a push killed hours ago
    with ProjectWriter.open(world.home, SLUG) as writer:
        assert len(writer.cleaned) == 4
    assert not (repo / "refs" / "heads" / "main.lock").exists()
    assert not stale.exists() and live.exists()  # a live push's quarantine waits on the lock
    world.leaf("extract-1")  # and the project takes writes


def test_a_lock_held_by_a_killed_process_does_not_wedge(world: World) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT); "
         "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)",
         str(world.home.lock_path(SLUG))], stdout=subprocess.PIPE)
    assert holder.stdout is not None and holder.stdout.readline().strip() == b"held"
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=10)
    holder.stdout.close()
    started = time.monotonic()
    world.leaf("extract-1")
    assert time.monotonic() - started < 10


def test_a_malformed_leaf_is_one_line_and_its_exit_code_not_a_traceback(world: World) -> None:
    with ProjectWriter.open(world.home, SLUG) as writer:
        writer.land(LeafEntry(at=NOW, actor="planner", actor_type="planner", description="a bad leaf"),
                    bookkeeping={"leaves/broken-1.yaml": b"leaf_id: broken-1\nkind: [unclosed\n"})
    result = rw_here("leaf", "list", SLUG, env={"RW_HOME": str(world.home.root)})  # the console script's entry
    assert result.returncode == EXIT_USAGE, result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "broken-1" in result.stderr
