"""A throwaway git repository driven by the real git binary, for differential tests of the patch applier."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_AUTHOR_DATE": "2026-11-30T12:00:00Z",
       "GIT_COMMITTER_DATE": "2026-11-30T12:00:00Z", "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"}


def git(repo: Path, *args: str, stdin: bytes | None = None, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(repo), *args], input=stdin, capture_output=True, env=ENV, check=check,
                          timeout=60)


def init(repo: Path, files: dict[str, bytes]) -> None:
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q")
    write(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", "base")


def write(repo: Path, files: Mapping[str, bytes | None]) -> None:
    for path, data in files.items():
        target = repo / path
        if data is None:
            target.unlink(missing_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def tree_listing(repo: Path, tree: str) -> set[tuple[str, str, str]]:
    """(mode, blob id, path) of every file in a tree."""
    out = git(repo, "ls-tree", "-r", "-z", tree).stdout.split(b"\0")
    entries = set()
    for item in out:
        if not item:
            continue
        meta, path = item.split(b"\t", 1)
        mode, _, blob = meta.decode().split(" ")
        entries.add((mode, blob, path.decode()))
    return entries
