"""A pytest plugin (pyproject.toml's addopts: `-p tests.support.scratch`) that puts the tests'
temporary folders in a tmpfs, /dev/shm, when the machine has one with room for a whole run
(TMPFS_FREE_BYTES: a run holds about 1.5 GB at its peak, and a container's /dev/shm may be 64 MB;
RW_TEST_ON_DISK=1: on disk).

The suite writes, fsyncs and removes many thousands of small files (homes, repositories, traces).
On a disk that the machine's other work shares, that waiting costs more than the tests' own work,
and pytest's default folder, shared by every run of the same user, makes each run start by
deleting an older run's files. Here each run gets a folder of its own: the base of `tmp_path`
and TMPDIR (so tempfile and the processes the tests start use it too), chosen once by the
process that runs the session (pytest-xdist's workers inherit it). It is removed when the run
passes and kept, and named, when it fails, for reading afterwards.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

TMPFS = Path("/dev/shm")
TMPFS_FREE_BYTES = 4 * 1024**3
_ROOT_KEY = pytest.StashKey[Path]()
_FAILED_KEY = pytest.StashKey[bool]()


@pytest.hookimpl(tryfirst=True)  # before the tmp_path plugin reads --basetemp
def pytest_configure(config: pytest.Config) -> None:
    if (config.option.basetemp or os.environ.get("RW_TEST_ON_DISK") or os.environ.get("PYTEST_XDIST_WORKER")
            or not (TMPFS.is_dir() and os.access(TMPFS, os.W_OK))
            or shutil.disk_usage(TMPFS).free < TMPFS_FREE_BYTES):
        return
    root = Path(tempfile.mkdtemp(prefix="rw-tests-", dir=TMPFS))
    # TMPDIR is what /tmp is to the processes the tests start, some as another user (the throwaway
    # PostgreSQL cluster runs as postgres): passable, and writable by all with the sticky bit.
    root.chmod(0o711)
    (root / "tmp").mkdir()
    (root / "tmp").chmod(0o1777)
    config.option.basetemp = str(root / "basetemp")
    os.environ["TMPDIR"] = str(root / "tmp")
    tempfile.tempdir = str(root / "tmp")
    config.stash[_ROOT_KEY] = root


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    session.config.stash[_FAILED_KEY] = exitstatus != 0


def pytest_unconfigure(config: pytest.Config) -> None:
    root = config.stash.get(_ROOT_KEY, None)
    if root is None:
        return
    if config.stash.get(_FAILED_KEY, True):
        print(f"\nthe tests' temporary folders are kept in {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)
