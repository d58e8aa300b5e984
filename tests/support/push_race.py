"""A race of people's pushes and `rw submit`s on one project, with real git clients and real
processes, and a cloner that clones the project while they race and after each round.

Each round, every pusher commits a file of its own (and two of them the same shared file, so
one of the two must be refused as stale) and every submitter writes a patch of a file of its
own; all start at once. Afterwards every racer either landed whole (exit 0, its file on main
byte for byte) or was refused cleanly (a REJECTED line with a code, nothing of it on main), no
output speaks of a crash or a missing object, every clone taken during the round succeeded, a
fresh clone has every landed file, `git fsck` finds every object, and the ledger verifies.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.git import GIT_ENV, clone, commit_file, git
from verifier.audits.audit import verify_ledger
from verifier.store.home import Home

RW = str(Path(sys.executable).parent / "rw")
BROKEN = ("crashed", "object not found", "failed to update ref", "missing", "fatal:", "Traceback")
SHARED = "notes/shared.md"


@dataclass
class Racer:
    name: str
    path: str
    data: bytes
    proc: subprocess.Popen[bytes] | None = None
    out: str = ""
    code: int | None = None


@dataclass
class Cloner:
    """Clones the project again and again while the racers run; every clone must succeed."""

    bare: Path
    scratch: Path
    failures: list[str] = field(default_factory=list)
    clones: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        while not self.stop.is_set():
            self.once()

    def once(self) -> None:
        dest = self.scratch / f"clone-{self.clones}"
        self.clones += 1
        # Over git's transport (file://, as the README clones): a plain path takes git's local
        # shortcut, which copies the objects folder file by file, git's own passing quarantine too.
        done = subprocess.run(["git", "clone", "-q", f"file://{self.bare}", str(dest)], capture_output=True, text=True,
                              env={**os.environ, **GIT_ENV}, check=False, timeout=120)
        if done.returncode != 0:
            self.failures.append(done.stderr.strip())
        subprocess.run(["rm", "-rf", str(dest)], check=False)


def _start_push(work: Path, token: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "HOME": str(work), **GIT_ENV}
    return subprocess.Popen(["git", "push", "-o", f"token={token}", "origin", "HEAD:refs/for/main"], cwd=work,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _start_submit(home: Home, slug: str, token: str, patch: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "RW_HOME": str(home.root), "RW_TOKEN": token}
    return subprocess.Popen([RW, "submit", slug, "--patch", str(patch), "--json"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _new_file_patch(path: str, data: bytes) -> bytes:
    lines = data.decode().splitlines(keepends=True)
    head = (f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
            f"@@ -0,0 +1,{len(lines)} @@\n")
    return head.encode() + b"".join(b"+" + line.encode() for line in lines)


def race_round(home: Home, slug: str, token: str, works: list[Path], scratch: Path, number: int,
               submitters: int = 2) -> list[str]:
    """One round; returns what went wrong (empty: the round was clean)."""
    bare = home.repo_path(slug)
    racers: list[Racer] = []
    for index, work in enumerate(works):
        git(work, "fetch", "-q", "origin")
        git(work, "reset", "-q", "--hard", "origin/main")
        shared = index < 2  # the first two race for one file: exactly one of them lands
        path = SHARED if shared else f"notes/round-{number}-push-{index}.md"
        data = f"# round {number}, pusher {index}\n\nA note.\n".encode()
        commit_file(work, path, data, f"round {number}: pusher {index}")
        racers.append(Racer(f"push-{index}", path, data))
    patches = []
    for index in range(submitters):
        path = f"notes/round-{number}-submit-{index}.md"
        data = f"# round {number}, submitter {index}\n".encode()
        patch = scratch / f"round-{number}-submit-{index}.diff"
        patch.write_bytes(_new_file_patch(path, data))
        patches.append(patch)
        racers.append(Racer(f"submit-{index}", path, data))
    before = set(home.project(slug).view(home.project(slug).tip()).walk("notes"))
    cloner = Cloner(bare, scratch)
    thread = threading.Thread(target=cloner.run)
    thread.start()
    try:
        for racer, work in zip(racers, works, strict=False):
            racer.proc = _start_push(work, token)
        for racer, patch in zip(racers[len(works):], patches, strict=True):
            racer.proc = _start_submit(home, slug, token, patch)
        for racer in racers:
            assert racer.proc is not None
            out, _ = racer.proc.communicate(timeout=600)
            racer.out, racer.code = out.decode("utf-8", "replace"), racer.proc.returncode
    finally:
        cloner.stop.set()
        thread.join()
    cloner.once()  # and one clone after the round
    return _judge_round(home, slug, racers, cloner, before, scratch, number)


def _judge_round(home: Home, slug: str, racers: list[Racer], cloner: Cloner, before: set[str], scratch: Path,
                 number: int) -> list[str]:
    problems = [f"round {number}: a clone failed: {failure}" for failure in cloner.failures]
    repo = home.project(slug)
    view = repo.view(repo.tip())
    for racer in racers:
        said = racer.out
        problems += [f"round {number}: {racer.name} said {word!r}: {said[-800:]}" for word in BROKEN if word in said]
        landed = racer.code == 0
        if racer.name.startswith("submit"):
            landed = landed and '"outcome": "accepted"' in said
        if landed and view.read(racer.path) != racer.data:
            problems.append(f"round {number}: {racer.name} reported landing but {racer.path} is not its bytes")
        if not landed:
            refused = "REJECTED" in said and "[" in said if racer.name.startswith("push") else '"rejected"' in said
            if not refused or (racer.path != SHARED and racer.path not in before and view.read(racer.path)):
                problems.append(f"round {number}: {racer.name} neither landed nor was refused cleanly: {said[-800:]}")
    shared = [racer for racer in racers if racer.path == SHARED]
    if shared and sum(1 for racer in shared if racer.code == 0) != 1:
        problems.append(f"round {number}: of the two pushes of {SHARED}, not exactly one landed")
    problems += [f"round {number}: {racer.name} was refused although it raced no one: {racer.out[-800:]}"
                 for racer in racers if racer.path != SHARED and racer.code != 0]
    fresh = clone(home.repo_path(slug), scratch / f"after-{number}")
    for racer in racers:
        on_disk = fresh / racer.path
        if racer.code == 0 and (not on_disk.exists() or on_disk.read_bytes() != racer.data):
            problems.append(f"round {number}: a fresh clone lacks {racer.path}")
    subprocess.run(["rm", "-rf", str(fresh)], check=False)
    fsck = git(home.repo_path(slug), "fsck", "--connectivity-only", "--no-dangling", check=False)
    if fsck.returncode != 0:
        problems.append(f"round {number}: git fsck: {fsck.stdout}{fsck.stderr}")
    if not verify_ledger(repo, home.read_anchor(slug)).ok:
        problems.append(f"round {number}: the ledger does not verify")
    refs = git(home.repo_path(slug), "for-each-ref", "--format=%(refname)").stdout.split()
    if refs != ["refs/heads/main"]:
        problems.append(f"round {number}: refs left behind: {refs}")
    return problems


def race(home: Home, slug: str, token: str, root: Path, rounds: int, pushers: int = 3) -> list[str]:
    """`rounds` rounds; stops at the first round that went wrong and returns its problems."""
    works = [clone(home.repo_path(slug), root / f"pusher-{index}") for index in range(pushers)]
    scratch = root / "scratch"
    scratch.mkdir()
    for number in range(rounds):
        problems = race_round(home, slug, token, works, scratch, number)
        if problems:
            return problems
    return []
