"""An outside agent for tests and the first-minute benchmark: a folder with no RW_HOME, a token
and a server URL, running `rw` as separate processes exactly as SKILL.md tells an agent to (or, with
`in_process`, through the same entry point in this process, for the fast tests that never call a
server)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.cli import rw_here

RW = str(Path(sys.executable).parent / "rw")


@dataclass(frozen=True)
class Ran:
    args: tuple[str, ...]
    code: int
    out: str
    err: str
    seconds: float
    cpu_s: float


@dataclass
class OutsideAgent:
    folder: Path
    server: str
    token: str
    ran: list[Ran] = field(default_factory=list)
    in_process: bool = False

    def env(self) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if not key.startswith("RW_")}
        env.update({"RW_TOKEN": self.token, "RW_SERVER": self.server, "GIT_TERMINAL_PROMPT": "0"})
        return env

    def rw(self, *args: str, cwd: Path | None = None, ok: bool = True) -> Ran:
        """One `rw` command in its own process; its wall and CPU time are kept."""
        before = os.times()
        started = time.perf_counter()
        if self.in_process:
            here = rw_here(*args, env=self.env(), exact_env=True, cwd=cwd or self.folder)
            code, out, err = here.returncode, here.stdout, here.stderr
        else:
            done = subprocess.run([RW, *args], cwd=cwd or self.folder, env=self.env(), capture_output=True,
                                  text=True, check=False, timeout=120)
            code, out, err = done.returncode, done.stdout, done.stderr
        after = os.times()
        cpu = (after.user - before.user + after.system - before.system) if self.in_process else \
            (after.children_user - before.children_user) + (after.children_system - before.children_system)
        ran = Ran(tuple(args), code, out, err, time.perf_counter() - started, cpu)
        self.ran.append(ran)
        if ok and code != 0:
            raise AssertionError(f"rw {' '.join(args)} exited {code}:\n{out}\n{err}")
        return ran


def sentences(text: str, count: int, *, skip: int = 0, min_words: int = 6) -> list[str]:
    """`count` sentences of the source, long enough to be findings, as an agent would pick them."""
    picked = [part.strip() + "." for part in text.split(". ") if len(part.split()) >= min_words]
    return picked[skip : skip + count]
