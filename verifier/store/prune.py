"""Drop the objects no ref reaches from a project repository: what refused and crashed attempts
left behind. Called only under the project's writer lock (a landing in flight writes objects
before its ref moves, and they must not be pruned from under it).

Why it matters: a clone made by copying the repository's folder carries every object in it,
including a crashed attempt's blobs that never landed. Agents clone through git's protocol
(`git clone file://...` or the HTTP endpoint), which sends only what is reachable, and recovery
prunes the rest so that nothing is left to copy.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

_TIMEOUT_S = 600


def prune_unreachable(repo_path: Path) -> str | None:
    """Repack the reachable objects and delete the unreachable ones; None, or what went wrong."""
    git = shutil.which("git")
    if git is None:
        return "git is not installed; unreachable objects were not pruned"
    steps = (
        # -a -d: one pack of what the refs reach; packs holding anything else are deleted.
        [git, "-C", str(repo_path), "repack", "-a", "-d", "-q"],
        # Loose objects no ref reaches, at any age (the writer lock is held).
        [git, "-C", str(repo_path), "prune", "--expire=now"],
    )
    for step in steps:
        result = subprocess.run(step, capture_output=True, timeout=_TIMEOUT_S, check=False)
        if result.returncode != 0:
            return f"`git {step[3]}` failed: {result.stderr.decode(errors='replace').strip()[:200]}"
    return None
