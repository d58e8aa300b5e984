"""An agent's working folder, made by `rw work`: a git clone of the project at the leaf's base, with
what the agent was handed kept beside the files in `.rw/` (git ignores it through .git/info/exclude):

    .rw/work.json           server, project, leaf, kind, base revision, agent, operator, trace level
    .rw/payload.json        the leaf's payload (contract, inputs) as the service served it
    .rw/FIELD-GUIDE.md      the project's Field Guide at claim time
    .rw/sources/<id>.txt    the exact derived text of each input source (what excerpts must quote)
    .rw/trace/              the trace being recorded (events.jsonl, context.md at L3)

Every `rw new`, `rw check`, `rw trace` and `rw submit` run inside the folder finds it through
`find_work`, so an agent needs nothing but the folder, the server URL and its token.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

STATE_DIR = ".rw"
STATE_FILE = "work.json"


@dataclass
class WorkState:
    server: str
    project: str
    leaf_id: str
    kind: str
    base_revision: str
    agent: str
    operator: str
    level: str = "L2"
    source_ids: list[str] = field(default_factory=list)
    started_at: str = ""
    submitted: list[str] = field(default_factory=list)  # submission ids, newest last


@dataclass(frozen=True)
class Work:
    """A working folder and its state."""

    root: Path
    state: WorkState

    @property
    def meta(self) -> Path:
        return self.root / STATE_DIR

    @property
    def trace_dir(self) -> Path:
        return self.meta / "trace"

    def payload(self) -> dict[str, Any]:
        value: dict[str, Any] = json.loads((self.meta / "payload.json").read_bytes())
        return value

    def contract(self) -> dict[str, Any]:
        contract: dict[str, Any] = self.payload()["contract"]
        return contract

    def source_text(self, source_id: str) -> str:
        where = self.meta / "sources" / f"{source_id}.txt"
        if not where.exists():
            raise FileNotFoundError(f"no text of {source_id} in {where.parent}; this leaf's sources are "
                                    f"{', '.join(self.state.source_ids) or 'none'}")
        return where.read_text(encoding="utf-8")

    def save(self) -> None:
        (self.meta / STATE_FILE).write_text(json.dumps(asdict(self.state), indent=2, sort_keys=True) + "\n")

    def write(self, relative: str, data: bytes) -> Path:
        target = self.root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        return target


def find_work(start: Path) -> Work:
    """The working folder holding `start` (itself or a parent)."""
    here = start.resolve()
    for folder in (here, *here.parents):
        state_file = folder / STATE_DIR / STATE_FILE
        if state_file.is_file():
            return Work(folder, WorkState(**json.loads(state_file.read_bytes())))
    raise FileNotFoundError(f"{start} is not inside a working folder (made by `rw work SLUG LEAF --server URL`)")


def git(root: Path, *args: str, stdin: bytes | None = None, index: Path | None = None) -> bytes:
    """Run git in a working folder (on another index file when `index` is given); its error text
    becomes the exception's message."""
    env = {**os.environ, "GIT_INDEX_FILE": str(index)} if index is not None else None
    done = subprocess.run(["git", *args], cwd=root, input=stdin, capture_output=True, check=False, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args[:2])}: {done.stderr.decode('utf-8', 'replace').strip()}")
    return done.stdout


def clone_at(url: str, dest: Path, revision: str) -> None:
    """Clone over git's smart HTTP and check out `revision` (detached: the leaf's base)."""
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(f"{dest} exists and is not empty; choose another --dir")
    dest.parent.mkdir(parents=True, exist_ok=True)
    git(dest.parent, "clone", "--quiet", "--no-checkout", url, str(dest))
    git(dest, "checkout", "--quiet", "--detach", revision)
    with (dest / ".git" / "info" / "exclude").open("a") as exclude:
        exclude.write(f"\n/{STATE_DIR}/\n")


def make_patch(work: Work) -> bytes:
    """Everything changed against the base, new files included, as `git diff --binary` writes it.

    `git add -A` first: a plain `git diff` leaves out files git does not track yet, which is every
    object an agent creates. It adds to a scratch copy of the index, never the clone's own, so
    `rw check` and `rw submit` change nothing git shows the agent (`git status` is as it was, and
    `git checkout FILE` still undoes an edit). Nothing is committed.
    """
    real = Path(git(work.root, "rev-parse", "--git-path", "index").decode("utf-8").strip())
    real = real if real.is_absolute() else work.root / real
    with tempfile.TemporaryDirectory(prefix="rw-index-", dir=work.meta) as scratch:
        index = Path(scratch) / "index"
        if real.exists():
            shutil.copyfile(real, index)  # its stat cache keeps `add -A` from rehashing every file
        git(work.root, "add", "-A", index=index)
        return git(work.root, "diff", "--cached", "--binary", "--no-color", "--no-ext-diff",
                   work.state.base_revision, index=index)


def input_source_ids(payload: dict[str, Any]) -> list[str]:
    """The sources whose text the agent needs: the extract leaf's source, a reviewed finding's."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            source_id = value.get("source_id")
            if isinstance(source_id, str) and source_id not in found:
                found.append(source_id)
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(payload.get("inputs", {}))
    source_id = payload.get("contract", {}).get("inputs", {}).get("source_id")
    if isinstance(source_id, str) and source_id not in found:
        found.insert(0, source_id)
    return found


def manifest_for(work: Work, skill_version: str, summary: str | None = None) -> dict[str, object]:
    manifest: dict[str, object] = {"leaf_id": work.state.leaf_id, "agent": work.state.agent,
                                   "operator": work.state.operator, "base_revision": work.state.base_revision,
                                   "skill_version": skill_version, "level": work.state.level}
    if summary:
        manifest["summary"] = summary[:2000]
    return manifest


def default_final(work: Work) -> str:
    return f"Submitted leaf {work.state.leaf_id}."
