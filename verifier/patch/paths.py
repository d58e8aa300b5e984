"""Which path names a patch may use at all, before any leaf's write set is consulted.

A path is a plain relative name of ASCII segments. This one rule shuts out traversal, absolute
paths, every spelling of `.git` (case, trailing dots, NTFS short names, Unicode ignorables),
backslashes, control characters and empty segments, because none of them can be spelled.
"""

from __future__ import annotations

import re
import unicodedata

from verifier.errors import Rejection

MAX_PATH_CHARS = 400
MAX_SEGMENTS = 12
_SEGMENT_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$")
_IGNORABLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]")


def _looks_like_git(segment: str) -> bool:
    folded = _IGNORABLE.sub("", unicodedata.normalize("NFKC", segment)).casefold()
    folded = folded.strip(" .")
    return folded in ("git", "gitmodules", "gitattributes", "gitignore") or folded.startswith(
        ("git~", ".git")
    )


def path_problem(path: str) -> Rejection | None:
    """None if `path` may appear in a patch, else the rejection naming what is wrong with it."""
    shown = path.encode("unicode_escape").decode("ascii")
    if not path:
        return Rejection("bad_path", "empty path")
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in path):
        return Rejection("bad_path", f"path {shown!r} contains control characters")
    if "\\" in path:
        return Rejection("bad_path", f"path {shown!r} contains a backslash")
    if path.startswith("/"):
        return Rejection("path_traversal", f"path {shown!r} is absolute; paths are relative")
    segments = path.split("/")
    if any(segment in ("..", ".") for segment in segments):
        return Rejection("path_traversal", f"path {shown!r} steps out with '.' or '..'")
    if any(_looks_like_git(segment) for segment in segments):
        return Rejection("git_internal", f"path {shown!r} names git's own files")
    if "" in segments:
        return Rejection("bad_path", f"path {shown!r} has an empty segment ('//' or a trailing '/')")
    if len(path) > MAX_PATH_CHARS or len(segments) > MAX_SEGMENTS:
        return Rejection("bad_path", f"path {shown[:80]!r}... is too long")
    for segment in segments:
        if not _SEGMENT_RE.match(segment) or segment.endswith("."):
            return Rejection(
                "bad_path",
                f"path {shown!r}: segment {segment!r} must be ASCII letters, digits, '_', '-', "
                "'.', not start with '.' or '-' and not end with '.'",
            )
    return None
