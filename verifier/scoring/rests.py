"""What rests on what (issue 26): the index a revert's cascade reads instead of scanning the corpus.

For each object something rests on, the index names the corpus files resting on it: a source's
findings, a finding's links, a hypothesis's links, a finding's or a link's reviews, and the plans
and reports citing an object. Held copies (queue/) are not in it: the queue holds what waits for a
person, which does not grow with the corpus, and the cascade reads it whole. It is kept with the use scores
(scores/rests/, beside scores/use/, ADR 6 and ADR 13), fed the same writes at each landing
(`apply`): a written file's old edges go, its new ones come, so a landing costs the shards of
the objects it touches, whatever the size of the corpus.

The index is a map of where to look, never the decision: the cascade reads each file it names
and keeps it only if the file, parsed, really rests on what goes. So a name left behind (a
write this index was not fed) costs one read and is dropped, while a file it failed to name would
be missed; hence every landing
that scores feeds it (verifier.pipeline.scores.apply_writes), and it is built from the tree, by
one scan, when it is missing (a project from before it, a tree built by hand) or stale (written
in another format, or a shard that does not parse): `ensure`, `rebuild`. It depends only on the
files it covers (sorted, canonical JSON), so reverting a revert restores it byte for byte.

Pure: shards are read through a callable and written back as bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from verifier.errors import FormatError
from verifier.formats.indentjson import dumps_indented
from verifier.patch.apply import git_blob_id
from verifier.state.layout import (
    FINDINGS_DIR,
    LINKS_DIR,
    PLANS_DIR,
    QUEUE_DIR,
    REPORTS_DIR,
    RESTS_INDEX,
    RESTS_ROOT,
    REVIEWS_DIR,
    classify,
    rests_fanout_dir,
    rests_shard_path,
)
from verifier.state.view import TreeView

FORMAT = 1  # a marker of another format is a stale index: it is rebuilt from the tree
_MARKER = (json.dumps({"format": FORMAT}) + "\n").encode()
_MARKER_ID = git_blob_id(_MARKER)
_DEPENDANT_ROOTS = (FINDINGS_DIR, LINKS_DIR, REVIEWS_DIR)
_DOCUMENT_ROOTS = (PLANS_DIR, REPORTS_DIR)


def corpus_path(path: str) -> str:
    """The corpus path of a held copy (queue/<hold>/<path>), or the path itself."""
    return path.split("/", 2)[2] if path.startswith(f"{QUEUE_DIR}/") and path.count("/") >= 2 else path


# Every id a file can rest on or cite, as it is spelt in the file's bytes.
_ID = re.compile(rb"(?<![A-Za-z0-9_])(?:(?:src|fnd|lnk|rev)_[0-9a-f]{16}|H[1-9][0-9]{0,5})(?![A-Za-z0-9_])")
_INDEXED_TYPES = ("finding", "link", "review", "plan", "report")


def rests_on(path: str, data: bytes | None) -> frozenset[str]:
    """The ids a corpus file may rest on or cite (its edges in the index): every id its bytes
    name but its own. A superset of what the parsed file rests on (a rationale may name another
    finding), which the cascade narrows by parsing; found by one regex rather than a YAML parse,
    so that building the index for 100,000 files takes seconds, not minutes. The cascade before
    the index read the same way (every edge names the id it rests on in the file's bytes)."""
    kind = classify(path)
    if data is None or kind is None or kind.type not in _INDEXED_TYPES:
        return frozenset()
    return frozenset(found.decode() for found in _ID.findall(data)) - {kind.object_id}


def _walk(tree: TreeView, root: str) -> Iterator[str]:
    for name in tree.list_dir(root):
        path = f"{root}/{name}"
        if tree.is_dir(path):
            yield from _walk(tree, path)
        else:
            yield path


def indexed_files(tree: TreeView) -> Iterator[str]:
    """Every file the index covers: findings, links, reviews, plans and reports."""
    for root in (*_DEPENDANT_ROOTS, *_DOCUMENT_ROOTS):
        yield from _walk(tree, root)


def held_files(tree: TreeView) -> Iterator[str]:
    """The held copies of findings, links and reviews (queue/<hold>/...): read whole by the cascade."""
    for hold in tree.list_dir(QUEUE_DIR):
        for root in _DEPENDANT_ROOTS:
            yield from _walk(tree, f"{QUEUE_DIR}/{hold}/{root}")


def _dependant_id(path: str) -> str:
    kind = classify(path)
    return kind.object_id if kind is not None else path


def _parse_shard(data: bytes, where: str) -> dict[str, list[str]]:
    try:
        parsed = json.loads(data)
    except ValueError as exc:
        raise FormatError(f"{where}: not JSON ({exc})", where) from exc
    if not isinstance(parsed, dict) or not all(
            isinstance(key, str) and isinstance(paths, list) and all(isinstance(p, str) for p in paths)
            for key, paths in parsed.items()):
        raise FormatError(f"{where}: expected an object of id -> list of paths", where)
    return parsed


def _dump_shard(shard: Mapping[str, list[str]]) -> bytes:
    # json.dumps(..., indent=1)'s bytes, through its C encoder (verifier.formats.indentjson).
    return (dumps_indented({key: sorted(paths) for key, paths in sorted(shard.items()) if paths}) + "\n").encode()


@dataclass
class RestIndex:
    """The index over lazily read shards; `writes()` returns only what changed.

    `live` says whether the tree holds a current index (or this one was built here): a landing on
    a tree without one feeds nothing, and the next cascade builds it (`ensure`)."""

    read: Callable[[str], bytes | None]
    shards: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    dirty: set[str] = field(default_factory=set)
    existing: set[str] = field(default_factory=set)  # shards known to be in the tree
    built: bool = False  # built here by a scan: the marker is written too
    _live: bool | None = None

    @property
    def live(self) -> bool:
        if self._live is None:
            marker = self.read(RESTS_INDEX)
            try:
                self._live = marker is not None and json.loads(marker).get("format") == FORMAT
            except (ValueError, AttributeError):
                self._live = False
        return self._live

    def _shard(self, path: str) -> dict[str, list[str]]:
        if path not in self.shards:
            data = None if self.built else self.read(path)
            self.shards[path] = _parse_shard(data, path) if data else {}
            if data:
                self.existing.add(path)
        return self.shards[path]

    def _edit(self, target: str, path: str, *, add: bool) -> None:
        shard_path = rests_shard_path(target, _dependant_id(path))
        paths = self._shard(shard_path).setdefault(target, [])
        if add and path not in paths:
            paths.append(path)
        elif not add and path in paths:
            paths.remove(path)
        else:
            return
        self.dirty.add(shard_path)

    def _shards_of(self, target: str, tree: TreeView) -> list[str]:
        fanout = rests_fanout_dir(target)
        if fanout is None:
            return [rests_shard_path(target, target)]
        # Shards built here but not yet in the tree, and those the tree holds.
        pending = {path for path in self.shards if path.startswith(f"{fanout}/")}
        listed = set() if self.built else {f"{fanout}/{name}" for name in tree.list_dir(fanout)}
        return sorted(pending | listed)

    def dependants(self, target: str, tree: TreeView) -> list[str]:
        """The files the index names as resting on (or citing) `target`, sorted."""
        found: set[str] = set()
        for shard_path in self._shards_of(target, tree):
            found.update(self._shard(shard_path).get(target, ()))
        return sorted(found)

    # -- keeping it ------------------------------------------------------------------------
    def apply(self, before: TreeView, writes: Mapping[str, bytes | None]) -> None:
        """One landing's writes (paths to new bytes, None for a deletion) on the tree `before`."""
        if not self.live:
            return
        for path, data in sorted(writes.items()):
            if classify(path) is None:
                continue  # not a corpus object (held copies, scores, ledger): nothing to index
            old, new = rests_on(path, before.read(path)), rests_on(path, data)
            for target in sorted(old - new):
                self._edit(target, path, add=False)
            for target in sorted(new - old):
                self._edit(target, path, add=True)

    def rebuild(self, tree: TreeView) -> None:
        """Build the index from the tree by one scan (a missing or stale index); the shards of
        the old one that the new one does not rewrite are deleted."""
        old = set(_walk(tree, RESTS_ROOT))
        self.shards, self.dirty, self.existing, self.built, self._live = {}, set(old), old, True, True
        for path in old:
            self.shards[path] = {}
        for path in indexed_files(tree):
            for target in sorted(rests_on(path, tree.read(path))):
                self._edit(target, path, add=True)

    def ensure(self, tree: TreeView) -> None:
        """Build the index from `tree` (the tree its shards are read from) unless it holds a current one."""
        if self._live is None and getattr(self.read, "__self__", None) is tree \
                and tree.blob_id(RESTS_INDEX) == _MARKER_ID:
            self._live = True  # the marker as written here, known by its blob id unread (read is tree's)
        if not self.live:
            self.rebuild(tree)

    def writes(self) -> dict[str, bytes | None]:
        out: dict[str, bytes | None] = {}
        for path in sorted(self.dirty):
            shard = self.shards[path]
            if any(shard.values()):
                out[path] = _dump_shard(shard)
            elif path in self.existing:
                out[path] = None
        if self.built:
            out[RESTS_INDEX] = _MARKER
        return out
