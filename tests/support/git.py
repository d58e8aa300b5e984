"""Helpers for the git doors: run git, plant commits with plumbing, clone and push as a person."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "Stew Ard", "GIT_AUTHOR_EMAIL": "stew@example.org",
           "GIT_COMMITTER_NAME": "Stew Ard", "GIT_COMMITTER_EMAIL": "stew@example.org"}


def git(cwd: Path, *args: str, check: bool = True,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "HOME": str(cwd), **GIT_ENV, **(env or {})}
    return subprocess.run(["git", *args], cwd=cwd, env=full, capture_output=True, text=True, check=check,
                          timeout=120)


def plant_commit(bare: Path, path: str, data: str, message: str = "planted") -> str:
    """A commit on main written with git plumbing, bypassing every hook and the verifier."""
    tip = git(bare, "rev-parse", "refs/heads/main").stdout.strip()
    index = bare / "planted.index"
    env = {"GIT_INDEX_FILE": str(index)}
    git(bare, "read-tree", tip, env=env)
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=bare, input=data, capture_output=True,
                          text=True, check=True).stdout.strip()
    git(bare, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
    tree = git(bare, "write-tree", env=env).stdout.strip()
    index.unlink()
    commit = git(bare, "commit-tree", tree, "-p", tip, "-m", message).stdout.strip()
    git(bare, "update-ref", "refs/heads/main", commit, tip)
    return commit


def clone(bare: Path, dest: Path) -> Path:
    git(dest.parent, "clone", "-q", str(bare), dest.name)
    return dest


def commit_file(work: Path, path: str, data: str | bytes, message: str, env: dict[str, str] | None = None) -> str:
    """Write one file (text as UTF-8, bytes as they are) and commit it; `env` sets e.g. the author."""
    target = work / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data.encode() if isinstance(data, str) else data)
    git(work, "add", path)
    git(work, "commit", "-q", "-m", message, env=env)
    return git(work, "rev-parse", "HEAD").stdout.strip()


def push_for_review(work: Path, token: str | None, ref: str = "refs/for/main") -> subprocess.CompletedProcess[str]:
    """A person's push on the local path, the token as a push option."""
    options = ["-o", f"token={token}"] if token is not None else []
    return git(work, "push", *options, "origin", f"HEAD:{ref}", check=False)
