"""An in-memory project repository: the surface of `verifier.store.gitrepo.ProjectRepo` that the
writer and the pipeline use, over dicts.

Objects are stored under their real git ids (the sha1 of git's object framing, `<type> <size>\\0`
followed by the body git writes), so a tree or commit built here has the id pygit2 gives the same
content, and a test can compare the two byte for byte (tests/store/test_memrepo_agrees_with_git.py).
Refs are compare-and-swap like ProjectRepo's. Nothing touches the disk: `path` names a folder that
does not exist, which is what a writer's leftover sweep finds there.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pygit2

from verifier.errors import ConflictError, NotFound
from verifier.store.gitrepo import BRANCH, STAGED, Person, ProjectRepo

BLOB_MODE = 0o100644
TREE_MODE = 0o040000


def object_id(kind: str, body: bytes) -> str:
    """Git's id of an object: sha1 over `<kind> <size>\\0<body>`."""
    return hashlib.sha1(f"{kind} {len(body)}\0".encode() + body, usedforsecurity=False).hexdigest()


def _tree_body(entries: Mapping[str, tuple[int, str]]) -> bytes:
    # Git orders a tree's entries by name, comparing a subtree's name as if it ended in "/".
    def key(name: str) -> bytes:
        return name.encode() + (b"/" if entries[name][0] == TREE_MODE else b"")

    return b"".join(f"{entries[name][0]:o} {name}\0".encode() + bytes.fromhex(entries[name][1])
                    for name in sorted(entries, key=key))


def _signature_line(person: Person, when: datetime) -> str:
    delta = when.utcoffset()
    minutes = int(delta.total_seconds() // 60) if delta else 0
    sign = "-" if minutes < 0 else "+"
    hours, rest = divmod(abs(minutes), 60)
    return f"{person.name} <{person.email}> {int(when.timestamp())} {sign}{hours:02d}{rest:02d}"


@dataclass(frozen=True)
class MemSignature:
    name: str
    email: str


@dataclass(frozen=True)
class MemCommit:
    """A commit as the writer reads one: its id, tree, parents, author, committer and message."""

    store: MemRepo
    id: str
    tree_id: str
    parent_ids: tuple[str, ...]
    author: MemSignature
    committer: MemSignature
    message: str

    @property
    def parents(self) -> list[MemCommit]:
        return [self.store.commit(parent) for parent in self.parent_ids]


class MemTree:
    """A read-only view of one tree in a MemRepo (what `GitTree` is for pygit2)."""

    def __init__(self, store: MemRepo, tree_id: str | None) -> None:
        self.store = store
        self.tree_id = tree_id

    def _entry(self, path: str) -> tuple[int, str] | None:
        if self.tree_id is None or not path:
            return None
        entries = self.store.trees[self.tree_id]
        head, _, rest = path.strip("/").partition("/")
        found = entries.get(head)
        while rest and found is not None:
            if found[0] != TREE_MODE:
                return None
            head, _, rest = rest.partition("/")
            found = self.store.trees[found[1]].get(head)
        return found

    def file_mode(self, path: str) -> int | None:
        entry = self._entry(path)
        return None if entry is None else entry[0]

    mode = file_mode

    def read(self, path: str) -> bytes | None:
        entry = self._entry(path)
        return None if entry is None or entry[0] == TREE_MODE else self.store.blobs[entry[1]]

    def is_dir(self, path: str) -> bool:
        if not path:
            return self.tree_id is not None
        entry = self._entry(path)
        return entry is not None and entry[0] == TREE_MODE

    def _subtree(self, path: str) -> dict[str, tuple[int, str]] | None:
        if not path:
            return None if self.tree_id is None else self.store.trees[self.tree_id]
        entry = self._entry(path)
        return None if entry is None or entry[0] != TREE_MODE else self.store.trees[entry[1]]

    def list_dir(self, path: str) -> list[str]:
        return sorted(self._subtree(path) or {})

    def blob_id(self, path: str) -> str | None:
        entry = self._entry(path)
        return None if entry is None or entry[0] == TREE_MODE else entry[1]

    def walk(self, prefix: str = "") -> Iterator[str]:
        """Every file path below `prefix` (all files when empty)."""
        stack = [(prefix.rstrip("/"), self._subtree(prefix.rstrip("/")))]
        while stack:
            base, entries = stack.pop()
            for name, (mode, oid) in (entries or {}).items():
                path = f"{base}/{name}" if base else name
                if mode == TREE_MODE:
                    stack.append((path, self.store.trees[oid]))
                else:
                    yield path


class MemRepo:
    """One project repository held in dicts: blobs, trees and commits by git id, and the refs."""

    def __init__(self, name: str = "memory") -> None:
        self.path = Path("/nonexistent-in-memory-repository") / name
        self.blobs: dict[str, bytes] = {}
        self.trees: dict[str, dict[str, tuple[int, str]]] = {}
        self.commits: dict[str, MemCommit] = {}
        self.refs: dict[str, str] = {}

    @classmethod
    def copy_of(cls, repo: ProjectRepo) -> MemRepo:
        """Every commit reachable from `repo`'s main and staged refs, with its trees and blobs; each
        tree's id is computed again here and must be git's (a copy that disagrees fails loudly)."""
        mem = cls(repo.path.name)
        pending = [ref for ref in (repo.tip(), repo.staged()) if ref is not None]
        while pending:
            oid = pending.pop()
            if oid in mem.commits:
                continue
            commit = repo.commit(oid)
            parents = tuple(str(parent) for parent in commit.parent_ids)
            mem.commits[oid] = MemCommit(mem, oid, mem._copy_tree(repo, commit.tree), parents,
                                         MemSignature(commit.author.name, commit.author.email),
                                         MemSignature(commit.committer.name, commit.committer.email), commit.message)
            pending.extend(parents)
        for ref, target in ((BRANCH, repo.tip()), (STAGED, repo.staged())):
            if target is not None:
                mem.refs[ref] = target
        return mem

    def _copy_tree(self, repo: ProjectRepo, tree: pygit2.Tree) -> str:
        entries: dict[str, tuple[int, str]] = {}
        for entry in tree:
            name, mode = str(entry.name), int(entry.filemode)
            if entry.type == pygit2.enums.ObjectType.TREE:
                found = repo.repo[entry.id]
                assert isinstance(found, pygit2.Tree)
                entries[name] = (TREE_MODE, self._copy_tree(repo, found))
            else:
                _, data = repo.repo.read(entry.id)
                assert isinstance(data, bytes)
                entries[name] = (mode, self._blob(data))
        oid = self._tree(entries)
        assert oid == str(tree.id), f"tree {tree.id} hashed to {oid} here"
        return oid

    # objects --------------------------------------------------------------------------------------

    def _blob(self, data: bytes) -> str:
        oid = object_id("blob", data)
        self.blobs.setdefault(oid, data)
        return oid

    def _tree(self, entries: dict[str, tuple[int, str]]) -> str:
        oid = object_id("tree", _tree_body(entries))
        self.trees.setdefault(oid, dict(entries))
        return oid

    def has_object(self, oid: str) -> bool:
        return oid in self.blobs or oid in self.trees or oid in self.commits

    # reading --------------------------------------------------------------------------------------

    def tip(self) -> str | None:
        return self.refs.get(BRANCH)

    def staged(self) -> str | None:
        return self.refs.get(STAGED)

    def commit(self, rev: str) -> MemCommit:
        target = self.refs.get(rev, rev)
        if rev in ("HEAD", "main"):
            target = self.refs.get(BRANCH, rev)
        found = self.commits.get(target)
        if found is None:
            raise NotFound(f"no commit {rev!r} in {self.path.name}")
        return found

    def view(self, rev: str | None) -> MemTree:
        return MemTree(self, None if rev is None else self.commit(rev).tree_id)

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """True when `ancestor` is `descendant` or reachable from it."""
        if ancestor == descendant:
            return True
        seen: set[str] = set()
        stack = [descendant]
        while stack:
            oid = stack.pop()
            found = self.commits.get(oid)
            if found is None or oid in seen:
                continue
            seen.add(oid)
            if ancestor in found.parent_ids:
                return True
            stack.extend(found.parent_ids)
        return False

    def changed_paths(self, old: str, new: str) -> list[str]:
        """Paths whose content differs between two commits."""
        before, after = self.view(old), self.view(new)
        files = {path: before.blob_id(path) for path in before.walk()}
        now = {path: after.blob_id(path) for path in after.walk()}
        return sorted(path for path in files.keys() | now.keys() if files.get(path) != now.get(path))

    # writing --------------------------------------------------------------------------------------

    def build_tree(self, base: str | None, writes: Mapping[str, bytes | None]) -> str:
        """Lay `writes` over `base`'s tree (None deletes a file); return the new tree's id."""
        entries = self.trees[self.commit(base).tree_id] if base else {}
        built = self._build(entries, writes)
        return self._tree(built or {})

    def _build(self, entries: Mapping[str, tuple[int, str]],
               writes: Mapping[str, bytes | None]) -> dict[str, tuple[int, str]] | None:
        # The same order as ProjectRepo._build: deletions here, then folders below, then new files
        # here, so a swap of a file and a folder of one name in one write set works either way.
        out = dict(entries)
        nested: dict[str, dict[str, bytes | None]] = {}
        direct: dict[str, bytes | None] = {}
        for path, data in writes.items():
            head, sep, rest = path.partition("/")
            if sep:
                nested.setdefault(head, {})[rest] = data
            else:
                direct[head] = data
        for head in [head for head, data in direct.items() if data is None]:
            existing = out.get(head)
            if existing is not None and existing[0] == TREE_MODE:
                raise ConflictError(f"{head} is a directory; a file deletion cannot remove it")
            out.pop(head, None)
        for name, sub_writes in nested.items():
            existing = out.get(name)
            if existing is not None and existing[0] != TREE_MODE:
                raise ConflictError(f"{name} is a file; it cannot hold {next(iter(sub_writes))}")
            below = self._build(self.trees[existing[1]] if existing else {}, sub_writes)
            if below is None:
                out.pop(name, None)
            else:
                out[name] = (TREE_MODE, self._tree(below))
        for head, data in direct.items():
            if data is not None:
                existing = out.get(head)
                if existing is not None and existing[0] == TREE_MODE:
                    raise ConflictError(f"{head} is a directory; a file cannot replace it")
                out[head] = (BLOB_MODE, self._blob(data))
        return out or None

    def create_commit(self, *, tree: str, parents: list[str], author: Person, committer: Person,
                      message: str, when: datetime) -> str:
        if tree not in self.trees:
            raise NotFound(f"no tree {tree} in {self.path.name}")
        lines = [f"tree {tree}", *(f"parent {parent}" for parent in parents),
                 f"author {_signature_line(author, when)}", f"committer {_signature_line(committer, when)}"]
        body = ("\n".join(lines) + "\n\n" + message).encode()
        oid = object_id("commit", body)
        self.commits.setdefault(oid, MemCommit(self, oid, tree, tuple(parents), MemSignature(author.name, author.email),
                                               MemSignature(committer.name, committer.email), message))
        return oid

    def move_branch(self, new: str, expected: str | None) -> None:
        """Point main at `new` if it still points at `expected` (compare-and-swap)."""
        self._move(BRANCH, new, expected)

    def move_staged(self, new: str, expected: str | None) -> None:
        self._move(STAGED, new, expected)

    def _move(self, ref: str, new: str, expected: str | None) -> None:
        current = self.refs.get(ref)
        if current != expected:
            raise ConflictError(f"{ref} moved from {expected} to {current} during the write")
        if new not in self.commits:
            raise NotFound(f"no commit {new} in {self.path.name}")
        self.refs[ref] = new
