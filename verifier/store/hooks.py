"""Install the hooks of a project's bare repository (by `rw init`, and again by `rw` when missing).

`pre-receive` runs `<python> -m verifier.gitdoor.receive` with RW_HOME found from the repository
itself (two folders up from `$RW_HOME/projects/<slug>.git`, where git runs the hook), never a path
written at `rw init`: a copied, moved or restored home takes pushes at once. It refuses every
ref update but refs/for/main and lands those through the writer. `proc-receive` (configured for
refs/for with receive.procReceiveRefs; git 2.29 or later) then takes git's own update of
refs/for/main and reports it done without creating the ref, so concurrent pushes never collide on
it (verifier.gitdoor.procreceive). `post-receive` deletes refs/for/main should a git without
proc-receive have created it: the ref a person pushed to is never left behind (the landed commits
are on main). Push options are advertised so a local push can carry the person's token (`-o token=...`).
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import pygit2

import verifier
from verifier.store.files import write_atomic

MARK = "# researchwiki-verifier hook v2"


def pre_receive(python: str = sys.executable) -> str:
    # git runs the hook in the bare repository ($GIT_DIR); the home is two folders above it.
    return (f"#!/bin/sh\n{MARK}: installed by rw init; people push to refs/for/main (README: people)\n"
            "# RW_HOME is where this repository is ($RW_HOME/projects/<slug>.git), found at each push\n"
            'RW_HOME="$(cd "${GIT_DIR:-.}/../.." && pwd -P)" || exit 1\n'
            f"export RW_HOME\nexec {shlex.quote(python)} -m verifier.gitdoor.receive\n")


PROC_RECEIVE_REFS = "refs/for"
PROC_RECEIVE_MODULE = "verifier.gitdoor.procreceive"  # named, not imported: it is a program of its own


def proc_receive(python: str = sys.executable) -> str:
    """Run without the environment's site set-up (-S): it needs the standard library only, and
    skipping site keeps it at a few tens of milliseconds; PYTHONPATH names where the verifier's
    package lives instead."""
    root = Path(verifier.__file__).resolve().parent.parent
    return (f"#!/bin/sh\n{MARK}: git's update of refs/for/main is reported done; the push landed in pre-receive\n"
            f"PYTHONPATH={shlex.quote(str(root))} exec {shlex.quote(python)} -S -m {PROC_RECEIVE_MODULE}\n")


POST_RECEIVE = (f"#!/bin/sh\n{MARK}: the pushed-to ref is never kept; what landed is on main\n"
                "git update-ref -d refs/for/main >/dev/null 2>&1\nexit 0\n")


def install_hooks(home: Path, repo_path: Path) -> bool:
    """Write the hooks and the config they need when they are missing or differ; True if written.

    `home` is the home `repo_path` lies in; the hook text does not name it (see pre_receive)."""
    wanted = {"pre-receive": pre_receive(), "proc-receive": proc_receive(), "post-receive": POST_RECEIVE}
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
    if PROC_RECEIVE_REFS not in list(config.get_multivar("receive.procReceiveRefs")):
        config.set_multivar("receive.procReceiveRefs", "^$", PROC_RECEIVE_REFS)
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
