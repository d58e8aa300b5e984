"""`rw check`: the verifier's own checks run on a working folder, before anything is sent.

The same code as the pipeline's steps 3, 5 and 6 (patch parsing, the write set, the leaf kind's
check) and its trace ingest, so the codes and messages are the verifier's. A scout's URLs are
fetched in the service's own fetch mode (the payload says it: `online` or `offline`), and the
note says which. What only the service can do is left out and said so: whether the leaf is still
open, and whether the branch moved past the base (a stale verdict).
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from verifier.agentkit.tracing import TraceLog
from verifier.agentkit.workdir import Work, default_final, make_patch, manifest_for
from verifier.checks.context import CheckContext
from verifier.checks.registry import check_for
from verifier.errors import FormatError, Rejected, Rejection
from verifier.formats.leaf import LeafContract
from verifier.formats.project import ProjectFile, parse_project
from verifier.patch.parse import ParsedPatch, parse_patch
from verifier.pipeline.patching import apply_to, check_write_set
from verifier.pipeline.routing import route
from verifier.pipeline.trace import check_asked_level, inspect_bundle
from verifier.state.layout import PROJECT_FILE
from verifier.state.view import Overlay

if TYPE_CHECKING:
    from verifier.formats.fetch import FetchOutcome
    from verifier.store.fetcher import Fetcher


_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


class CommitTree:
    """A TreeView over one commit of the clone (the leaf's base), read through git itself, in one
    git process (`git cat-file --batch`, issue 26: each git process is a share of `rw check`'s
    CPU): its trees walked once for the listing `git ls-tree -r` gives, each file's bytes read
    when a check asks. `close()` ends the process (run_checks does, however the checks end)."""

    def __init__(self, root: Path, revision: str) -> None:
        self.root = root
        self.blobs: dict[str, str] = {}
        self.children: dict[str, set[str]] = {"": set()}
        self._read: dict[str, bytes] = {}
        self._git = subprocess.Popen(["git", "cat-file", "--batch"], cwd=root, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            self._walk(revision)
        except BaseException:
            self.close()
            raise

    def _object(self, name: str, kind: str) -> tuple[str, bytes]:
        """(id, bytes) of object `name`, which must be a `kind`; RuntimeError naming it otherwise."""
        stdin, stdout = self._git.stdin, self._git.stdout
        assert stdin is not None and stdout is not None
        stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
        stdin.flush()
        header = stdout.readline().rstrip(b"\n").split(b" ")
        if len(header) != 3 or header[1].decode() != kind:
            raise RuntimeError(f"git cat-file: {name[:80]} is not a {kind} in this clone")
        body = stdout.read(int(header[2]) + 1)[:-1]  # each object's bytes end with a line break
        return header[0].decode(), body

    def _walk(self, revision: str) -> None:
        if not _OBJECT_ID.fullmatch(revision):  # it becomes a line of git's input
            raise RuntimeError(f"git cat-file: base revision {revision[:80]!r} is not a commit id")
        root_id, root = self._object(f"{revision}^{{tree}}", "tree")
        width = len(root_id) // 2  # a raw object id: 20 bytes (SHA-1) or 32 (SHA-256)
        trees: list[tuple[str, bytes]] = [("", root)]
        while trees:
            folder, body = trees.pop()
            at = 0
            while at < len(body):
                space = body.index(b" ", at)
                nul = body.index(b"\0", space)
                mode, name = body[at:space], body[space + 1:nul].decode("utf-8", "surrogateescape")
                oid = body[nul + 1:nul + 1 + width].hex()
                at = nul + 1 + width
                path = f"{folder}/{name}" if folder else name
                if mode == b"40000":
                    trees.append((path, self._object(oid, "tree")[1]))
                elif mode != b"160000":  # submodules: the verifier refuses them anyway
                    self._add_blob(path, oid)

    def _add_blob(self, path: str, oid: str) -> None:
        self.blobs[path] = oid
        parent, _, name = path.rpartition("/")
        self.children.setdefault(parent, set()).add(name)
        while parent:
            grand, _, folder = parent.rpartition("/")
            self.children.setdefault(grand, set()).add(folder)
            parent = grand

    def read(self, path: str) -> bytes | None:
        oid = self.blobs.get(path)
        if oid is None:
            return None
        if path not in self._read:
            self._read[path] = self._object(oid, "blob")[1]
        return self._read[path]

    def is_dir(self, path: str) -> bool:
        return path.rstrip("/") in self.children

    def list_dir(self, path: str) -> list[str]:
        return sorted(self.children.get(path.rstrip("/"), ()))

    def blob_id(self, path: str) -> str | None:
        return self.blobs.get(path)  # git's own id of the file: what git_blob_id computes

    def close(self) -> None:
        """End the git process: its input closed, it exits."""
        if self._git.stdin is not None:
            self._git.stdin.close()
        if self._git.stdout is not None:
            self._git.stdout.close()
        self._git.wait()


@dataclass
class LocalResult:
    rejections: list[Rejection]
    summary: str = ""
    notes: list[str] = field(default_factory=list)
    trace_problems: list[Rejection] = field(default_factory=list)
    patch: bytes = b""
    holds: list[str] = field(default_factory=list)  # the hold types the service will route it to

    @property
    def ok(self) -> bool:
        return not self.rejections


def scout_fetches(work: Work, leaf: LeafContract, patch: ParsedPatch, project: ProjectFile,
                  fetcher: Fetcher | None) -> tuple[dict[str, FetchOutcome], list[str]]:
    """A scout's URLs checked the way the service checks them: its payload says its fetch mode
    (`online`: fetched, here, with the service's fetcher and the project's policy; `offline`: not
    checked, so held, as the service holds them). Returns the outcomes and a note saying which."""
    if leaf.kind != "scout":
        return {}, []
    # Loaded only for a scout: `rw check` of every other kind starts without the store.
    from verifier.pipeline.inputs import fetch_new_sources  # noqa: PLC0415
    from verifier.store.fetcher import DEFAULT_USER_AGENT, HttpFetcher, OfflineFetcher  # noqa: PLC0415

    said = work.payload().get("fetch")
    mode = said.get("mode") if isinstance(said, dict) else None
    if mode not in ("online", "offline"):
        return {}, ["the service did not say how it fetches (an older payload): URLs not checked here"]
    if fetcher is None:
        private = bool(said.get("private_addresses")) if isinstance(said, dict) else False
        fetcher = OfflineFetcher() if mode == "offline" else HttpFetcher(user_agent=DEFAULT_USER_AGENT,
                                                                         allow_private_addresses=private)
    where = "not fetched: the service does not fetch either, so it holds them" if mode == "offline" else \
        "fetched from this machine, as the service fetches them"
    return fetch_new_sources(patch, project, fetcher), [f"fetch: {mode} (the service's mode); URLs {where}"]


def run_checks(work: Work, now: datetime, skill_version: str, fetcher: Fetcher | None = None) -> LocalResult:
    """The patch, the write set and the kind's check on the folder; then the trace as it stands.
    A scout's URLs are checked in the service's fetch mode (`scout_fetches`; `fetcher` stands in
    for the live one)."""
    patch = make_patch(work)
    leaf = LeafContract.model_validate(work.contract())
    base = CommitTree(work.root, work.state.base_revision)
    try:
        return _checked(work, now, skill_version, fetcher, patch, leaf, base)
    finally:
        base.close()


def _checked(work: Work, now: datetime, skill_version: str, fetcher: Fetcher | None, patch: bytes,
             leaf: LeafContract, base: CommitTree) -> LocalResult:
    try:
        parsed = parse_patch(patch)
        check_write_set(parsed, leaf.may_write)
        writes = apply_to(base, parsed)
        project, _ = parse_project(base.read(PROJECT_FILE) or b"", PROJECT_FILE)
    except Rejected as exc:
        return LocalResult(list(exc.rejections), patch=patch)
    except FormatError as exc:
        return LocalResult([Rejection("bad_format", exc.message, exc.where)], patch=patch)
    texts = {source_id: work.source_text(source_id) for source_id in work.state.source_ids}
    fetches, fetch_note = scout_fetches(work, leaf, parsed, project, fetcher)
    context = CheckContext(leaf=leaf, actor=work.state.agent, project=project, tree=Overlay(base, writes),
                           writes=writes, now=now, source_texts=texts, base_tree=base, actor_type="agent",
                           fetches=fetches)
    result = check_for(leaf.kind)(context)
    # Step 7 as the service takes it: what PROJECT.md holds, and what a check sends to a person.
    _routed, holds = route(dict(writes), project.holds, result.hold_paths)
    out = LocalResult(list(result.rejections), result.summary, [*result.notes, *fetch_note], patch=patch,
                      holds=holds if not result.rejections else [])
    try:
        # As `rw submit` will send it: ended by a final event if the agent recorded none.
        final = (now.isoformat().replace("+00:00", "Z"), default_final(work))
        log = TraceLog(work.trace_dir, work.state.level, root=work.root)
        record = inspect_bundle(log.bundle(manifest_for(work, skill_version), patch, final=final), patch)
        check_asked_level(leaf, record)  # step 4's: a warm leaf, or its contract, may ask for more
    except Rejected as exc:
        out.trace_problems = list(exc.rejections)
    return out


def result_json(result: LocalResult) -> dict[str, object]:
    """`rw check --json` (and the MCP `check` tool): the result as the verifier's codes say it."""
    # `ok` as the exit code has it: the patch and the trace both pass, so `rw submit` would too.
    return {"ok": result.ok and not result.trace_problems, "summary": result.summary, "notes": result.notes,
            "holds": result.holds, "rejections": [r.__dict__ for r in result.rejections],
            "trace": [r.__dict__ for r in result.trace_problems]}
