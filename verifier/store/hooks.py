"""Install the hooks of a project's bare repository (by `rw init`, and again by `rw` when missing).

`pre-receive` runs `<python> -m verifier.gitdoor.receive` with RW_HOME baked in: it refuses every
ref update but refs/for/main and lands those through the writer. `post-receive` deletes
refs/for/main, so the ref a person pushed to is never left behind (the landed commits are on
main). Push options are advertised so a local push can carry the person's token (`-o token=...`).
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import pygit2

from verifier.store.files import write_atomic

MARK = "# researchwiki-verifier hook v1"


def pre_receive(home: Path, python: str = sys.executable) -> str:
    return (f"#!/bin/sh\n{MARK}: installed by rw init; people push to refs/for/main (README: people)\n"
            f"RW_HOME={shlex.quote(str(home))} exec {shlex.quote(python)} -m verifier.gitdoor.receive\n")


POST_RECEIVE = (f"#!/bin/sh\n{MARK}: the pushed-to ref is never kept; what landed is on main\n"
                "git update-ref -d refs/for/main >/dev/null 2>&1\nexit 0\n")


def install_hooks(home: Path, repo_path: Path) -> bool:
    """Write the hooks and the config they need when they are missing or differ; True if written."""
    wanted = {"pre-receive": pre_receive(home), "post-receive": POST_RECEIVE}
    written = False
    for name, text in wanted.items():
        path = repo_path / "hooks" / name
        if path.exists() and path.read_text(errors="replace") == text and os.access(path, os.X_OK):
            continue
        write_atomic(path, text.encode(), durable=False)
        path.chmod(0o755)
        written = True
    config = pygit2.Repository(str(repo_path)).config
    if not _config_true(config, "receive.advertisePushOptions"):
        config["receive.advertisePushOptions"] = True
        written = True
    return written


def _config_true(config: pygit2.Config, key: str) -> bool:
    try:
        return bool(config.get_bool(key))
    except (KeyError, pygit2.GitError):
        return False


def ensure_hooks(home: Path, projects: list[Path]) -> list[Path]:
    """Re-install the hooks of every project that lost them; returns those repaired."""
    return [path for path in projects if install_hooks(home, path)]
