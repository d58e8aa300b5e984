"""The read-only view of a project tree that the read model and the checks see, and an overlay
of pending writes.

Checks never touch pygit2: the store hands them something that satisfies `TreeView`, and the
pipeline lays the patch's writes over it with `Overlay`, so a check reads the tree as it would be
after landing without anything having been written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from verifier.patch.apply import git_blob_id


class TreeView(Protocol):
    def read(self, path: str) -> bytes | None:
        """The file's bytes, or None if there is no file at `path`."""

    def is_dir(self, path: str) -> bool: ...

    def list_dir(self, path: str) -> list[str]:
        """Names directly inside a directory (empty if it is not one)."""

    def blob_id(self, path: str) -> str | None:
        """Git's id of the file at `path`, or None; cheap equality of contents across trees."""


class Overlay:
    """`base` with `writes` laid on top (path -> bytes, or None for a deletion)."""

    def __init__(self, base: TreeView, writes: Mapping[str, bytes | None]) -> None:
        self.base = base
        self.writes = dict(writes)

    def read(self, path: str) -> bytes | None:
        if path in self.writes:
            return self.writes[path]
        return self.base.read(path)

    def is_dir(self, path: str) -> bool:
        return bool(self.list_dir(path))

    def list_dir(self, path: str) -> list[str]:
        prefix = path.rstrip("/") + "/" if path else ""
        names = set(self.base.list_dir(path))
        for written, data in self.writes.items():
            if written.startswith(prefix):
                name = written[len(prefix) :].split("/", 1)[0]
                if data is None and "/" not in written[len(prefix) :]:
                    names.discard(name)
                elif data is not None:
                    names.add(name)
        return sorted(names)

    def blob_id(self, path: str) -> str | None:
        if path in self.writes:
            data = self.writes[path]
            return None if data is None else git_blob_id(data)
        return self.base.blob_id(path)


class DictTree:
    """A TreeView over a plain dict of path -> bytes (tests and fixtures)."""

    def __init__(self, files: Mapping[str, bytes]) -> None:
        self.files = dict(files)

    def read(self, path: str) -> bytes | None:
        return self.files.get(path)

    def is_dir(self, path: str) -> bool:
        return bool(self.list_dir(path))

    def list_dir(self, path: str) -> list[str]:
        prefix = path.rstrip("/") + "/" if path else ""
        return sorted({p[len(prefix) :].split("/", 1)[0] for p in self.files if p.startswith(prefix)})

    def blob_id(self, path: str) -> str | None:
        data = self.files.get(path)
        return None if data is None else git_blob_id(data)
