"""An outside agent for tests and the first-minute benchmark: a folder with no RW_HOME, a token
and a server URL, running `rw` as separate processes exactly as SKILL.md tells an agent to."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

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

    def env(self) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if not key.startswith("RW_")}
        env.update({"RW_TOKEN": self.token, "RW_SERVER": self.server, "GIT_TERMINAL_PROMPT": "0"})
        return env

    def rw(self, *args: str, cwd: Path | None = None, ok: bool = True) -> Ran:
        """One `rw` command in its own process; its wall and CPU time are kept."""
        before = os.times()
        started = time.perf_counter()
        done = subprocess.run([RW, *args], cwd=cwd or self.folder, env=self.env(), capture_output=True,
                              text=True, check=False, timeout=120)
        after = os.times()
        ran = Ran(tuple(args), done.returncode, done.stdout, done.stderr, time.perf_counter() - started,
                  (after.children_user - before.children_user) + (after.children_system - before.children_system))
        self.ran.append(ran)
        if ok and done.returncode != 0:
            raise AssertionError(f"rw {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
        return ran


def sentences(text: str, count: int, *, skip: int = 0, min_words: int = 6) -> list[str]:
    """`count` sentences of the source, long enough to be findings, as an agent would pick them."""
    picked = [part.strip() + "." for part in text.split(". ") if len(part.split()) >= min_words]
    return picked[skip : skip + count]
