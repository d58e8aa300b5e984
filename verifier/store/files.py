"""Small disk primitives: atomic file replacement and an exclusive per-name lock."""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import threading
from collections.abc import Iterator
from pathlib import Path


def write_atomic(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace `path` with `data` so readers see the old or the new file, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # Unique per process, thread and call: service workers write shared caches concurrently.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.{secrets.token_hex(4)}.tmp")
    with tmp.open("wb") as handle:
        handle.write(data)
        if durable:
            handle.flush()
            os.fsync(handle.fileno())
    tmp.replace(path)
    if durable:
        fsync_dir(path.parent)


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
