"""A live process that holds a lock file (flock, as the writer takes it) until the test lets it go:
the stand-in for a hung writer is a real process, and its release is an event the test controls,
not a timer."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

_HOLD = ("import fcntl, os, sys\n"
         "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
         "fcntl.flock(fd, fcntl.LOCK_EX)\n"
         "print('held', flush=True)\n"
         "sys.stdin.read()\n")  # until the test closes our stdin


@contextlib.contextmanager
def lock_held(path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Hold `path`'s lock in another live process for the block; it lets go when the block ends."""
    path.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"held"
        yield holder
    finally:
        if holder.stdin is not None:
            holder.stdin.close()
        holder.wait(timeout=60)
        if holder.stdout is not None:
            holder.stdout.close()
