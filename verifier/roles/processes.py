"""Worker processes under a wall-clock limit: started in a process group of their own (no shell, no
stdin), stopped at the limit with SIGTERM to the whole group, then SIGKILL `TERM_GRACE_S` later.

The group matters: an agent CLI starts tools, and a limit that killed only the CLI would leave its
children running on the leaf. What ended the process is kept as a value (exit code, signal, the
limit), so the crash row can say which.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

TERM_GRACE_S = 5.0


@dataclass(frozen=True)
class Finished:
    exit_code: int | None  # None: stopped at the limit
    signal: int | None  # the signal that ended it, when one did (ours at the limit, or another's)
    seconds: float
    limit_s: float

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None

    def failure(self) -> str | None:
        """Why this run counts as a crash, or None when it exited 0."""
        if self.timed_out:
            return (f"stopped at the wall-clock limit of {self.limit_s:g}s "
                    f"(SIGTERM to its process group, SIGKILL {TERM_GRACE_S:g}s later)")
        if self.signal is not None:
            return f"killed by signal {self.signal} ({signal.Signals(self.signal).name})"
        if self.exit_code != 0:
            return f"exited with code {self.exit_code}"
        return None


def stop_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the process's group, then, once the leader is gone or the grace period is over,
    SIGKILL to the whole group; waits for the leader. The SIGKILL goes even when the leader obeyed:
    a child that ignores SIGTERM would otherwise outlive the limit (the group's id cannot be
    reused while any member lives, so it reaches only what is left of this group)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=TERM_GRACE_S)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def run_limited(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], stdout: Path, stderr: Path,
                limit_s: float) -> Finished:
    """Run `argv` in `cwd` with exactly `env`, its stdout and stderr to the two files."""
    began = time.monotonic()
    with stdout.open("wb") as out, stderr.open("wb") as err:
        proc = subprocess.Popen(list(argv), cwd=cwd, env=dict(env), stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            code: int | None = proc.wait(timeout=limit_s)
        except subprocess.TimeoutExpired:
            stop_group(proc)
            return Finished(None, signal.SIGTERM, time.monotonic() - began, limit_s)
    seconds = time.monotonic() - began
    if code is not None and code < 0:
        return Finished(code, -code, seconds, limit_s)
    return Finished(code, None, seconds, limit_s)
