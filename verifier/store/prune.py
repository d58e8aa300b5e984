"""Drop the objects no ref reaches from a project repository: what refused and crashed attempts
left behind. Called only under the project's writer lock (a landing in flight writes objects
before its ref moves, and they must not be pruned from under it).

Why it matters: a clone made by copying the repository's folder carries every object in it,
including a crashed attempt's blobs that never landed. Agents clone through git's protocol
(`git clone file://...` or the HTTP endpoint), which sends only what is reachable, and recovery
prunes the rest so that nothing is left to copy. A write that fails for lack of space (or any
failed object write) prunes the loose objects it left at once, before its writer lets the lock
go (prune_loose: no repack, which would need the space the disk lacks), in the CLI as in the
service. Safe under the lock because only a writer holding it adds objects the branch needs: a
push's objects stay in git's quarantine (objects/incoming-*, never pruned) while its hook lands
them under the lock. What git moves into the store after the hook accepted is reached by the
landing, or is the pushed commits refs/for/main names for a moment before post-receive drops
it; a prune in that moment can at worst fail that throwaway ref's update, never the landing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

_TIMEOUT_S = 600


def git_env() -> dict[str, str]:
    """The environment without git's own variables: inside a push's hook GIT_OBJECT_DIRECTORY
    names the quarantine, and a prune there would delete the push's objects."""
    return {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}


def _run(steps: list[list[str]]) -> str | None:
    for step in steps:
        result = subprocess.run(step, capture_output=True, timeout=_TIMEOUT_S, check=False, env=git_env())
        if result.returncode != 0:
            return f"`git {step[3]}` failed: {result.stderr.decode(errors='replace').strip()[:200]}"
    return None


def prune_loose(repo_path: Path) -> str | None:
    """Delete the loose objects (and git's temporary object files) no ref reaches; None, or what
    went wrong. Needs no free space: it only reads and unlinks."""
    git = shutil.which("git")
    if git is None:
        return "git is not installed; unreachable objects were not pruned"
    return _run([[git, "-C", str(repo_path), "prune", "--expire=now"]])


def prune_unreachable(repo_path: Path) -> str | None:
    """Repack the reachable objects and delete the unreachable ones; None, or what went wrong."""
    git = shutil.which("git")
    if git is None:
        return "git is not installed; unreachable objects were not pruned"
    steps = [
        # -a -d: one pack of what the refs reach; packs holding anything else are deleted.
        [git, "-C", str(repo_path), "repack", "-a", "-d", "-q"],
        # Loose objects no ref reaches, at any age (the writer lock is held).
        [git, "-C", str(repo_path), "prune", "--expire=now"],
    ]
    return _run(steps)
