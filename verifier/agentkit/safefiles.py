"""Reading and writing inside a working folder without ever following a link.

Every file the agent's client writes (or reads back and sends) is opened from a descriptor of the
working folder, one path segment at a time, each with O_NOFOLLOW: a link planted in the served
tree or made later (`.rw -> elsewhere`, `findings -> elsewhere`) is refused by name, never written
or read through, and a path can only name something below the folder (no absolute path, no `..`).
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class LinkRefused(Exception):  # noqa: N818 - names the refusal the caller reports
    """A path below the working folder that is a link, not a folder where one is needed, or a
    spelling that leaves the folder; the message names the path and the segment."""


def segments(relative: str) -> list[str]:
    """The segments of a path below the folder; refuses absolute paths, `.`, `..` and empty segments."""
    parts = relative.split("/")
    if relative.startswith("/") or "\0" in relative or any(part in ("", ".", "..") for part in parts):
        raise LinkRefused(f"{relative!r} is not a plain path below the working folder")
    return parts


def _enter(fd: int, name: str, shown: str, *, create: bool) -> int:
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o777, dir_fd=fd)
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise LinkRefused(f"{shown} is a link or not a folder; refusing to go through it "
                              "(the working folder holds no links)") from None
        raise


@contextlib.contextmanager
def _parent(root: Path, parts: list[str], *, create: bool) -> Iterator[int]:
    """A descriptor of the folder holding the last segment, reached without following links."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for depth, name in enumerate(parts[:-1], 1):
            inner = _enter(fd, name, "/".join(parts[:depth]), create=create)
            os.close(fd)
            fd = inner
        yield fd
    finally:
        os.close(fd)


def _open_file(fd: int, name: str, shown: str, flags: int) -> int:
    try:
        return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise LinkRefused(f"{shown} is a link; refusing to write or read through it "
                              "(the working folder holds no links)") from None
        raise


def write_bytes(root: Path, relative: str, data: bytes, *, append: bool = False) -> Path:
    """Write (or append) `data` at `relative` below `root`, making folders; returns the path."""
    parts = segments(relative)
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
    with _parent(root, parts, create=True) as fd:
        out = _open_file(fd, parts[-1], relative, flags)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(out, view):]
        finally:
            os.close(out)
    return root / relative


def open_read(root: Path, relative: str) -> BinaryIO:
    """The file at `relative` below `root`, open for reading; FileNotFoundError when absent,
    LinkRefused for a link anywhere on the way."""
    parts = segments(relative)
    with _parent(root, parts, create=False) as fd:
        return os.fdopen(_open_file(fd, parts[-1], relative, os.O_RDONLY), "rb")


def read_bytes(root: Path, relative: str) -> bytes:
    with open_read(root, relative) as source:
        return source.read()


def exists(root: Path, relative: str) -> bool:
    """Whether something (a link included) is at `relative`, looked at without following links."""
    parts = segments(relative)
    try:
        with _parent(root, parts, create=False) as fd:
            os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True
