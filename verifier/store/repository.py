"""The surface of a project repository that the writer and the pipeline use, as a Protocol.

`verifier.store.gitrepo.ProjectRepo` (pygit2, on disk) is the implementation; the tests' in-memory
repository (tests/support/memrepo.py) is another, checked against it. Commits are read through
`StoredCommit` (what a pygit2.Commit offers the writer), trees through `RepoTree`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Protocol

from verifier.store.gitrepo import Person


class CommitPerson(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def email(self) -> str: ...


class StoredCommit(Protocol):
    @property
    def id(self) -> object:
        """The commit's id; `str()` of it is the hex id."""

    @property
    def parents(self) -> Sequence[StoredCommit]: ...

    @property
    def author(self) -> CommitPerson: ...

    @property
    def message(self) -> str: ...


class RepoTree(Protocol):
    """A read-only tree at one revision (a TreeView with modes and a walk)."""

    def read(self, path: str) -> bytes | None: ...

    def is_dir(self, path: str) -> bool: ...

    def list_dir(self, path: str) -> list[str]: ...

    def blob_id(self, path: str) -> str | None: ...

    def file_mode(self, path: str) -> int | None: ...

    def walk(self, prefix: str = "") -> Iterator[str]: ...


class ProjectRepository(Protocol):
    """One project repository: read revisions, build trees and commits, move refs by compare-and-swap."""

    @property
    def path(self) -> Path: ...

    def tip(self) -> str | None: ...

    def staged(self) -> str | None: ...

    def commit(self, rev: str) -> StoredCommit: ...

    def view(self, rev: str | None) -> RepoTree: ...

    def is_ancestor(self, ancestor: str, descendant: str) -> bool: ...

    def has_object(self, oid: str) -> bool: ...

    def build_tree(self, base: str | None, writes: Mapping[str, bytes | None]) -> str: ...

    def create_commit(self, *, tree: str, parents: list[str], author: Person, committer: Person,
                      message: str, when: datetime) -> str: ...

    def move_branch(self, new: str, expected: str | None) -> None: ...

    def move_staged(self, new: str, expected: str | None) -> None: ...

    def changed_paths(self, old: str, new: str) -> list[str]: ...
