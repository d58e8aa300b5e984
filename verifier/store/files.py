"""Small disk primitives: atomic file replacement (with an exact mode when asked), a private
folder, one flush of a whole file system, and an exclusive per-name lock, waited on for a bounded
time."""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from verifier.constants import LOCK_WAIT_S
from verifier.errors import BusyError

# Polling the lock: the first retries come fast (most holds are short), then every 50 ms, which
# costs a waiter one system call per poll and a landing at most 50 ms of latency.
_POLL_FIRST_S = 0.002
_POLL_MAX_S = 0.05


def write_atomic(path: Path, data: bytes, *, durable: bool = True, mode: int | None = None) -> None:
    """Replace `path` with `data` so readers see the old or the new file, never half of one.

    `mode` (0o600 for the home's secrets): the file has exactly that mode from its creation, so
    it is never readable by others, not even between the write and a chmod."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # Unique per process, thread and call: service workers write shared caches concurrently.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666 if mode is None else mode)
    if mode is not None:
        os.fchmod(fd, mode)  # the umask may have narrowed it; make it exactly `mode`
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        if durable:
            handle.flush()
            os.fsync(handle.fileno())
    tmp.replace(path)
    if durable:
        fsync_dir(path.parent)


def private_dir(path: Path) -> Path:
    """The folder `path`, made 0700 from creation (the mode given to mkdir, then exactly, past the
    umask) and narrowed to 0700 when found looser: for what only the home's owner may read."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700)
    if path.stat().st_mode & 0o077:
        path.chmod(0o700)
    return path


def _syncfs() -> Callable[[int], int] | None:
    try:
        call: Callable[[int], int] = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):  # not Linux (or no glibc): os.sync below
        return None
    return call


_SYNCFS = _syncfs()


def sync_filesystem(path: Path) -> None:
    """Make everything written so far on the file system holding `path` durable, in one call.

    Many small files written unsynced and then one syncfs(2) cost one flush instead of one per
    file (git's own batch mode does the same): the writer writes a group's objects this way and
    syncs once before its branch moves (verifier.store.gitrepo). Without syncfs, sync(2)."""
    if _SYNCFS is None:
        os.sync()
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        if _SYNCFS(fd) != 0:
            code = ctypes.get_errno()
            raise OSError(code, f"syncfs of {path} failed: {os.strerror(code)}")
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def exclusive_lock(path: Path, *, wait_s: float | None = LOCK_WAIT_S, what: str | None = None) -> Iterator[None]:
    """Hold an exclusive advisory lock on `path` (created if missing) for the block.

    The kernel drops the lock when the process dies, so a killed writer never wedges a project;
    a live holder that keeps it past `wait_s` seconds is answered with BusyError (nothing done,
    retry later) rather than waited on without end; `what` names the lock in that answer.
    `wait_s=None` waits as long as it takes: only for locks whose every holder is itself bounded
    (a publish, bounded by its push's timeout).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        _acquire(fd, what or path.name, wait_s)
    except BaseException:
        os.close(fd)
        raise
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _acquire(fd: int, what: str, wait_s: float | None) -> None:
    if wait_s is None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return
    deadline = time.monotonic() + wait_s
    pause = _POLL_FIRST_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BusyError(f"{what} is held by another live process for more than {wait_s:g} s "
                                "(a long or hung write); nothing was done: try again later") from None
            time.sleep(min(pause, left))
            pause = min(pause * 2, _POLL_MAX_S)
