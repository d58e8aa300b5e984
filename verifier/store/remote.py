"""A project's branch on a git host (docs/deploy.md): read where the host's branch is, and move it
by an atomic compare-and-swap push. Git itself speaks to the host (any URL git can push to: SSH,
HTTPS, a Gitea or GitHub repository, a file:// bare repository), with credentials from git's own
configuration and the environment; nothing here stores a secret.

`--force-with-lease=refs/heads/main:<expected>` makes the host update the branch only if it still
points where the verifier last left it, under the host's ref lock: a host branch someone else moved
is never overwritten, and the push fails instead.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from verifier.constants import GIT_TIMEOUT_S
from verifier.errors import HistoryBrokenError, RetryableError

BRANCH_REF = "refs/heads/main"
# Lines of a refused ref update in `git push --porcelain` output: the host's branch is elsewhere.
_MOVED = ("[rejected]", "stale info", "fetch first", "non-fast-forward")


def _git(git_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}  # never wait for a password nobody will type
    try:
        return subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, text=True, env=env,
                              timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RetryableError(f"the project's git host did not answer ({exc}); nothing was kept: try again") from exc


def remote_tip(git_dir: Path, url: str) -> str | None:
    """Where the host's branch points (None: the host has no such branch yet)."""
    done = _git(git_dir, "ls-remote", "--", url, BRANCH_REF)
    if done.returncode != 0:
        raise RetryableError(f"the project's git host {url} cannot be read ({done.stderr.strip()[:300]}); "
                             "nothing was kept: try again")
    for line in done.stdout.splitlines():
        oid, _, ref = line.partition("\t")
        if ref == BRANCH_REF:
            return oid
    return None


def push_branch(git_dir: Path, url: str, new: str, expected: str | None, *, slug: str) -> None:
    """Move the host's branch from `expected` (None: absent) to `new`, or fail and move nothing.

    HistoryBrokenError when the host's branch is not at `expected` (someone else moved it);
    RetryableError when the host could not be reached or failed otherwise."""
    lease = f"--force-with-lease={BRANCH_REF}:{expected or ''}"
    done = _git(git_dir, "push", "--porcelain", lease, "--", url, f"{new}:{BRANCH_REF}")
    if done.returncode == 0:
        return
    said = f"{done.stdout}\n{done.stderr}"
    if any(marker in said for marker in _MOVED):
        raise HistoryBrokenError(
            f"project {slug} refuses writes: its branch on the git host {url} moved without the verifier "
            f"(expected {(expected or 'no branch')[:12]}); nothing was kept. A person repairs: see "
            "docs/deploy.md (the host's branch protection should let only the verifier push)")
    raise RetryableError(f"pushing to the project's git host {url} failed ({done.stderr.strip()[:300]}); "
                         "nothing was kept: try again")
