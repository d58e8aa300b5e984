"""Small disk primitives: atomic file replacement (with an exact mode when asked), a private
folder, and an exclusive per-name lock."""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import threading
from collections.abc import Iterator
from pathlib import Path


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


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def exclusive_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on `path` (created if missing) for the block.

    The kernel drops the lock when the process dies, so a killed writer never wedges a project.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
