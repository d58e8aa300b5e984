"""A steward's home made the way the README makes one, for the first-hour tests (issue 23 point 7):
settings, then `rw init` as its own process (no hand-written leaf, no `rw planner wake`), an
agent's token, and `rw serve` on loopback. Tests whose subject is not `rw init` itself take a copy
of the home `rw init` made once per test process (`copied_initialised`)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from tests.support.agent import RW
from tests.support.service_harness import Server, start
from tests.support.templates import built
from verifier.store.home import Home, Settings
from verifier.store.hooks import install_hooks
from verifier.wiring import open_home

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Steward:
    home: Home
    init_out: str

    def rw(self, *args: str, ok: bool = True, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """A steward's `rw` command on the home, in its own process."""
        full = {key: value for key, value in os.environ.items() if not key.startswith("RW_")}
        full.update({"RW_HOME": str(self.home.root), **(env or {})})
        done = subprocess.run([RW, *args], env=full, capture_output=True, text=True, check=False, timeout=120)
        if ok and done.returncode != 0:
            raise AssertionError(f"rw {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
        return done


def initialised(root: Path, slug: str, template: str | Path, *, settings: Settings | None = None,
                no_wake: bool = False) -> Steward:
    """A fresh home with `rw init SLUG --from fixtures/TEMPLATE` (or a folder) run as a process."""
    home = open_home(root / "home")
    home.save_settings(settings or Settings(durable=False, fetch="offline"))
    steward = Steward(open_home(root / "home"), "")
    folder = template if isinstance(template, Path) else ROOT / "fixtures" / template
    args = ["init", slug, "--from", str(folder), *(["--no-wake"] if no_wake else [])]
    done = steward.rw(*args)
    return Steward(open_home(root / "home"), done.stdout)


def copied_initialised(root: Path, slug: str, template: str) -> Steward:
    """What `initialised(root, slug, template)` gives (default settings), for tests of what comes
    after `rw init`: its process runs once per test process for each slug and template, and each
    caller gets a copy of that home at `root`/home (its hooks written again for the copy), so what
    one test changes no other sees. Leaves and warm pools last hours, so a copy made minutes later
    is as fresh as a new `rw init` for what the tests do with it."""
    made = built(f"initialised-{slug}-{template}", lambda folder: initialised(folder, slug, template))
    shutil.copytree(made.home.root, root / "home", symlinks=True)
    home = open_home(root / "home")
    for project in home.projects():
        install_hooks(home.root, home.repo_path(project))
    return Steward(home, made.init_out)


def agent_token(home: Home, handle: str = "first-timer", *, human: bool = False) -> str:
    return home.identities.add(handle, handle if human else f"{handle}-op", "human" if human else "agent",
                               datetime.now(UTC).replace(microsecond=0))


@contextmanager
def serving(home: Home) -> Iterator[Server]:
    server = start(home.root)
    try:
        yield server
    finally:
        server.stop()
