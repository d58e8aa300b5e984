"""An agent's working folder, made by `rw work`: a git clone of the project at the leaf's base, with
what the agent was handed kept beside the files in `.rw/` (git ignores it through .git/info/exclude):

    .rw/work.json           server, project, leaf, kind, base revision, agent, operator, trace level
    .rw/payload.json        the leaf's payload (contract, inputs) as the service served it
    .rw/FIELD-GUIDE.md      the project's Field Guide at claim time
    .rw/SKILL.md            the live skill the service served at claim time (its version in work.json)
    .rw/sources/<id>.txt    the exact derived text of each input source (what excerpts must quote)
    .rw/trace/              the trace being recorded (events.jsonl, context.md at L3)

Every `rw new`, `rw check`, `rw trace` and `rw submit` run inside the folder finds it through
`find_work`, so an agent needs nothing but the folder, the server URL and its token.

The served tree is not trusted: `clone_at` refuses a revision that is not a commit id and a tree
holding a link, a submodule or anything at `.rw` before checking it out (and removes the clone),
and every file written or read back here goes through `safefiles` (no link is ever followed).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from verifier.agentkit.safefiles import LinkRefused, exists, read_bytes, write_bytes
from verifier.formats.ids import SOURCE_ID_RE

STATE_DIR = ".rw"
STATE_FILE = "work.json"
_COMMIT_RE = re.compile(r"^[0-9a-f]{40}$")
_LINK_MODES = {b"120000": "a symbolic link", b"160000": "a submodule"}


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
    # The version of .rw/SKILL.md, the live skill served at claim time: the manifest's skill_version.
    # Empty for a folder made before the service served its skill (the packaged skill's is used).
    skill_version: str = ""


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
        value: dict[str, Any] = json.loads(read_bytes(self.root, f"{STATE_DIR}/payload.json"))
        return value

    def contract(self) -> dict[str, Any]:
        contract: dict[str, Any] = self.payload()["contract"]
        return contract

    def source_text(self, source_id: str) -> str:
        relative = f"{STATE_DIR}/sources/{source_id}.txt"
        if not SOURCE_ID_RE.match(source_id) or not exists(self.root, relative):
            raise FileNotFoundError(f"no text of {source_id!r} in {self.meta / 'sources'}; this leaf's sources are "
                                    f"{', '.join(self.state.source_ids) or 'none'}")
        return read_bytes(self.root, relative).decode("utf-8")

    def save(self) -> None:
        data = (json.dumps(asdict(self.state), indent=2, sort_keys=True) + "\n").encode()
        write_bytes(self.root, f"{STATE_DIR}/{STATE_FILE}", data)

    def write(self, relative: str, data: bytes) -> Path:
        """Write a file of the folder; a link anywhere on its path is refused (LinkRefused)."""
        return write_bytes(self.root, relative, data)

    def has(self, relative: str) -> bool:
        return exists(self.root, relative)

    def read(self, relative: str) -> bytes:
        return read_bytes(self.root, relative)


def find_work(start: Path) -> Work:
    """The working folder holding `start` (itself or a parent)."""
    here = start.resolve()
    for folder in (here, *here.parents):
        if (folder / STATE_DIR).is_symlink():
            raise LinkRefused(f"{folder / STATE_DIR} is a link; a working folder's {STATE_DIR}/ is a folder of its own")
        if (folder / STATE_DIR / STATE_FILE).is_file():
            return Work(folder, WorkState(**json.loads(read_bytes(folder, f"{STATE_DIR}/{STATE_FILE}"))))
    raise FileNotFoundError(f"{start} is not inside a working folder (made by `rw work SLUG LEAF --server URL`)")


def git(root: Path, *args: str, stdin: bytes | None = None, index: Path | None = None) -> bytes:
    """Run git in a working folder (on another index file when `index` is given); its error text
    becomes the exception's message."""
    env = {**os.environ, "GIT_INDEX_FILE": str(index)} if index is not None else None
    done = subprocess.run(["git", *args], cwd=root, input=stdin, capture_output=True, check=False, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args[:2])}: {done.stderr.decode('utf-8', 'replace').strip()}")
    return done.stdout


def tree_problem(root: Path, revision: str) -> str | None:
    """What in the tree of `revision` the client refuses to check out, or None: a link or a
    submodule anywhere (a project holds neither, and a link would carry later writes elsewhere),
    or anything at `.rw`, the client's own folder."""
    for entry in git(root, "ls-tree", "-r", "-z", "--full-tree", revision).split(b"\0"):
        if not entry:
            continue
        meta, _, raw_path = entry.partition(b"\t")
        path = raw_path.decode("utf-8", "backslashreplace")
        mode = meta.split(b" ")[0]
        if mode in _LINK_MODES:
            return f"{path} is {_LINK_MODES[mode]}"
        if path == STATE_DIR or path.startswith(f"{STATE_DIR}/"):
            return f"{path} is inside {STATE_DIR}/, the folder rw keeps the leaf's inputs in"
    return None


def clone_at(url: str, dest: Path, revision: str) -> None:
    """Clone over git's smart HTTP and check out `revision` (detached: the leaf's base).

    Refused (LinkRefused, the clone removed) when the served tree holds a link, a submodule or
    `.rw`; ValueError when `revision` is not a commit id (it becomes a git argument)."""
    if not _COMMIT_RE.match(revision):
        raise ValueError(f"base revision {revision[:80]!r} is not a commit id (40 hex digits)")
    if dest.is_symlink():
        raise LinkRefused(f"{dest} is a link; choose another --dir")
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(f"{dest} exists and is not empty; choose another --dir")
    made = not dest.exists()
    dest.parent.mkdir(parents=True, exist_ok=True)
    # core.symlinks=false: even a link git itself would write is written as a plain file.
    git(dest.parent, "clone", "--quiet", "--no-checkout", "--config", "core.symlinks=false", url, str(dest))
    try:
        problem = tree_problem(dest, revision)
        if problem is not None:
            raise LinkRefused(f"the served repository is refused: {problem} at {revision[:12]}; "
                              "nothing was checked out")
        git(dest, "checkout", "--quiet", "--detach", revision)
        write_bytes(dest, ".git/info/exclude", f"\n/{STATE_DIR}/\n".encode(), append=True)
    except BaseException:
        remove_clone(dest, made)  # no half-made clone is left behind
        raise


def remove_clone(dest: Path, made: bool) -> None:
    """Remove what was put in `dest` (the folder too when `made`); never follows a link."""
    for child in list(dest.iterdir()) if dest.is_dir() and not dest.is_symlink() else []:
        if child.is_dir() and not child.is_symlink():
            import shutil  # noqa: PLC0415 - only a refused clone is removed; `rw check` never loads it

            shutil.rmtree(child)
        else:
            child.unlink()
    if made and dest.is_dir():
        dest.rmdir()


_GIT_LOCATION_VARIABLES = ("GIT_DIR", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_WORK_TREE")


def _index_file(root: Path) -> Path:
    """The clone's index: .git/index in a folder `rw work` cloned (a plain .git directory, no git
    variable moving it), which spares a git process per command; else what git itself says."""
    if (root / ".git").is_dir() and not (root / ".git").is_symlink() and not any(
            name in os.environ for name in _GIT_LOCATION_VARIABLES):
        return root / ".git" / "index"
    found = Path(git(root, "rev-parse", "--git-path", "index").decode("utf-8").strip())
    return found if found.is_absolute() else root / found


def make_patch(work: Work) -> bytes:
    """Everything changed against the base, new files included, as `git diff --binary` writes it.

    `git add -A` first: a plain `git diff` leaves out files git does not track yet, which is every
    object an agent creates. It adds to a scratch copy of the index, never the clone's own, so
    `rw check` and `rw submit` change nothing git shows the agent (`git status` is as it was, and
    `git checkout FILE` still undoes an edit). Nothing is committed.
    """
    real = _index_file(work.root)
    # The scratch index is this process's own file in .rw/ (which git ignores), removed however
    # the diff ends; named by the process id, so two commands in one folder never share one.
    scratch = f"{STATE_DIR}/index-{os.getpid()}"
    index = work.root / scratch
    try:
        if real.exists():
            # Its stat cache keeps `add -A` from rehashing every file; written without following a link.
            write_bytes(work.root, scratch, real.read_bytes())
        git(work.root, "add", "-A", index=index)
        return git(work.root, "diff", "--cached", "--binary", "--no-color", "--no-ext-diff",
                   work.state.base_revision, index=index)
    finally:
        index.unlink(missing_ok=True)
        index.with_name(index.name + ".lock").unlink(missing_ok=True)


def manifest_for(work: Work, skill_version: str, summary: str | None = None) -> dict[str, object]:
    manifest: dict[str, object] = {"leaf_id": work.state.leaf_id, "agent": work.state.agent,
                                   "operator": work.state.operator, "base_revision": work.state.base_revision,
                                   "skill_version": skill_version, "level": work.state.level}
    if summary:
        manifest["summary"] = summary[:2000]
    return manifest


def default_final(work: Work) -> str:
    return f"Submitted leaf {work.state.leaf_id}."
