"""Keeps a project repository's objects packed: what landings write as loose object files is
rolled into packs by git in the background, so a busy project's repository stays small.

Why: libgit2 writes every object of a landing as its own zlib file (its blobs, the trees from the
root down to each changed folder, two commits). On a 10,000-finding project under 16 agents that
was 43 files and about 200 KB of disk a landing (each file takes at least a 4 KB block), 7 MB a
second at 35 landings a second; packed, a landing costs 35-42 KB, since one version of a tree
differs from the next by a few entries and a pack stores the difference
(scripts/bench_throughput.py reports `repo_kb_per_landing`).

When: after a writer published (verifier.pipeline.writer), this counts the loose objects the way
`git gc --auto` does (the files in one of the 256 fan-out folders, times 256) and, past
UPKEEP_LOOSE_OBJECTS (git's own gc.auto default), starts one pass for that repository in a
background thread; a pass already running for it is not doubled (in this process, nor in
another: a lock file in the repository's folder). The pass is
`git repack -d` (the reachable loose objects into one new pack, then their loose copies deleted)
and, once UPKEEP_PACKS packs have piled up, `git repack --geometric=2 -d`, which also takes the
unreachable loose objects and merges packs so that each is at least twice the next one's size (a
bounded number of packs, each object rewritten a logarithmic number of times). It runs at low
CPU priority on one thread and never touches a ref or git's lock files, so it is safe beside a writer:
git writes the new pack under a temporary name, renames it into place, and only then deletes the
loose copies (libgit2 looks again for an object it misses after re-reading the pack folder). A
pass killed half-way leaves the objects where they were, and a temporary pack file that writer
recovery removes once it is older than any pass may run. A pass a short-lived command started
(`rw init` of a large corpus) goes on after the command exits, and its lock goes with the command:
another process may then start a second pass beside it, which git tolerates (both pack the same
loose objects; the duplicate packs are merged by a later geometric pass). Where git is not
installed nothing is packed, and that is logged once.

The price: a pass costs about 0.13 ms of CPU an object (4 s for 30,000), which at a sustained
28-34 landings a second on two cores is about a sixth of the throughput (server CPU 45 against 33
ms a landing in bench_throughput); a quieter project pays it when it is idle.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import threading
from pathlib import Path

from verifier.constants import UPKEEP_LOOSE_OBJECTS, UPKEEP_PACKS, UPKEEP_TIMEOUT_S
from verifier.errors import BusyError
from verifier.store.files import exclusive_lock
from verifier.store.prune import git_env

log = logging.getLogger(__name__)

# The fan-out folder git samples for its own estimate (builtin/gc.c: objects/17).
_SAMPLE = "17"
# Held by the process packing a repository (in the repository's folder, where git ignores it).
_LOCK = "rw-upkeep.lock"


def loose_estimate(repo_path: Path) -> int:
    """About how many loose objects the repository holds: one fan-out folder's count times 256
    (object ids are uniform, so one folder in 256 is a fair sample; one directory read)."""
    try:
        with os.scandir(repo_path / "objects" / _SAMPLE) as entries:
            return 256 * sum(1 for entry in entries if len(entry.name) == 38)
    except FileNotFoundError:
        return 0


class Upkeep:
    """Starts packing passes for the repositories this process published to. One per home."""

    def __init__(self, *, threshold: int = UPKEEP_LOOSE_OBJECTS) -> None:
        self.threshold = threshold
        self._git = shutil.which("git")
        self._nice = shutil.which("nice")
        self._running: set[Path] = set()
        self._idle = threading.Condition()
        self._told_no_git = False
        self.passes = 0  # passes ended in this process: packed, failed or left to another's (tests)

    def published(self, repo_path: Path) -> bool:
        """Start a pass for the repository if it holds more loose objects than the threshold and
        none is running for it; whether one was started."""
        if loose_estimate(repo_path) <= self.threshold:
            return False
        return self.pack(repo_path)

    def pack(self, repo_path: Path) -> bool:
        """Start a pass for the repository now, whatever it holds, unless one is running for it
        (or git is missing); whether one was started."""
        if self._git is None:
            if not self._told_no_git:
                self._told_no_git = True
                log.warning("git is not installed: loose objects in %s are not packed", repo_path)
            return False
        with self._idle:
            if repo_path in self._running:
                return False
            self._running.add(repo_path)
        thread = threading.Thread(target=self._pass, args=(repo_path,), name=f"upkeep {repo_path.name}", daemon=True)
        thread.start()
        return True

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until no pass of this process is running; False if `timeout` passed first."""
        with self._idle:
            return self._idle.wait_for(lambda: not self._running, timeout)

    def _command(self, repo_path: Path) -> list[str]:
        assert self._git is not None
        nice = [self._nice, "-n", "10"] if self._nice else []  # landings come first
        # Incremental (the reachable loose objects into one new pack) until packs pile up; then
        # geometric, which also takes the unreachable loose ones and merges the small packs.
        packs = sum(1 for _ in (repo_path / "objects" / "pack").glob("pack-*.idx"))
        how = ["--geometric=2"] if packs >= UPKEEP_PACKS else []
        return [*nice, self._git, "-C", str(repo_path), "repack", *how, "-d", "-n", "-q", "--threads=1"]

    def _pass(self, repo_path: Path) -> None:
        try:
            # One pass per repository across processes too (the service's workers, a person's `rw`):
            # the one that finds the lock held leaves the packing to its holder.
            with exclusive_lock(repo_path / _LOCK, wait_s=0, what=f"packing {repo_path.name}"):
                done = subprocess.run(self._command(repo_path), capture_output=True, timeout=UPKEEP_TIMEOUT_S,
                                      check=False, env=git_env())
            if done.returncode != 0:
                why = done.stderr.decode(errors="replace").strip()[:300]
                log.warning("packing %s failed (exit %s): %s", repo_path, done.returncode, why)
        except BusyError:
            pass
        except (OSError, subprocess.TimeoutExpired) as exc:
            log.warning("packing %s failed: %s", repo_path, exc)
        finally:
            with self._idle:
                self._running.discard(repo_path)
                self.passes += 1
                self._idle.notify_all()
