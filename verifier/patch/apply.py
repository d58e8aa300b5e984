"""Applying parsed file changes to file contents, exactly and without fuzz. Pure.

Hunks must sit at the line numbers they state, context and removed lines must match byte for
byte, and a deletion must remove the whole file. The result is compared with the blob ids the
patch's `index` lines claim, so a patch that says one thing and does another is refused.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from verifier.errors import Rejected, Rejection
from verifier.patch.parse import FileChange, Hunk, ParsedPatch


def git_blob_id(data: bytes) -> str:
    """The id git gives a blob with these bytes (sha1 over 'blob <len>\\0' + data)."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data, usedforsecurity=False).hexdigest()


@dataclass(frozen=True)
class Write:
    """One resulting file state: the bytes to write at `path`, or None to delete it."""

    path: str
    data: bytes | None


def _fail(code: str, message: str, path: str) -> Rejected:
    return Rejected(Rejection(code, message, path))


def _render(text: str, newline: bool) -> str:
    return text + "\n" if newline else text


def split_lines(text: str) -> list[str]:
    """Lines ending in "\n" (the last may lack it). Unlike str.splitlines, only "\n" breaks a
    line, as in git: form feeds, U+2028 and friends are ordinary characters."""
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def _check_trailing_context(hunks: tuple[Hunk, ...], old_lines: list[str], path: str) -> None:
    """As git: a hunk with context but none after its changes must end at the end of the file
    (else the missing context hides what follows). A patch with no context at all is taken as
    zero-context by declaration (`diff -U0`) and exempt."""
    if not any(line.tag == " " for hunk in hunks for line in hunk.lines):
        return
    for hunk in hunks:
        if hunk.lines and hunk.lines[-1].tag != " " and hunk.old_count:
            end = hunk.old_start - 1 + hunk.old_count
            if end != len(old_lines):
                raise _fail("does_not_apply", f"hunk at line {hunk.old_start} has no trailing context but does "
                            "not end at the end of the file", path)


def apply_hunks(old: str, hunks: tuple[Hunk, ...], path: str) -> str:
    """Apply hunks to `old`; every hunk at exactly its stated position."""
    old_lines = split_lines(old)
    _check_trailing_context(hunks, old_lines, path)
    out: list[str] = []
    cursor = 0  # index into old_lines of the next line not yet copied
    for hunk in hunks:
        # A hunk of zero old lines inserts after line old_start; otherwise it starts at it.
        start = hunk.old_start if hunk.old_count == 0 else hunk.old_start - 1
        if start < cursor or start > len(old_lines):
            raise _fail("does_not_apply", f"hunk at line {hunk.old_start} is out of order or past the end", path)
        out.extend(old_lines[cursor:start])
        cursor = start
        for line in hunk.lines:
            if line.tag in (" ", "-"):
                expected = _render(line.text, line.newline)
                actual = old_lines[cursor] if cursor < len(old_lines) else None
                if actual != expected:
                    shown = "end of file" if actual is None else repr(actual[:60])
                    raise _fail(
                        "does_not_apply",
                        f"line {cursor + 1}: patch expects {expected[:60]!r}, the file has {shown}",
                        path,
                    )
                cursor += 1
                if line.tag == " ":
                    out.append(expected)
            else:
                out.append(_render(line.text, line.newline))
    out.extend(old_lines[cursor:])
    result = "".join(out)
    # A line without a newline may only be the last one.
    if any(not piece.endswith("\n") for piece in split_lines(result)[:-1]):
        raise _fail("does_not_apply", "a line without a final newline is not the last line", path)
    return result


def _decode(data: bytes, path: str) -> str:
    # As git: a file with a NUL byte is binary. Other bytes that are not UTF-8 are carried
    # through exactly (surrogateescape), so a Latin-1 text file is patched byte for byte.
    if b"\x00" in data:
        raise _fail("binary", "a text patch cannot change a binary file", path)
    return data.decode("utf-8", "surrogateescape")


def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def _check_blob(claimed: str | None, data: bytes, what: str, path: str) -> None:
    if claimed is None or set(claimed) == {"0"}:
        return
    actual = git_blob_id(data)
    if not actual.startswith(claimed):
        raise _fail(
            "does_not_apply",
            f"the patch's index line says the {what} blob is {claimed}, but it is {actual[:len(claimed)]}",
            path,
        )


def apply_change(change: FileChange, read: Callable[[str], bytes | None]) -> list[Write]:
    """Apply one file change against file contents returned by `read` (None = absent)."""
    if change.op == "create":
        if read(change.path) is not None:
            raise _fail("path_exists", f"the patch creates {change.path}, which already exists", change.path)
        data = change.binary if change.binary is not None else (
            _encode(apply_hunks("", change.hunks, change.path))
        )
        _check_blob(change.new_blob, data, "new", change.path)
        return [Write(change.path, data)]
    assert change.old_path is not None
    old = read(change.old_path)
    if old is None:
        raise _fail("missing_path", f"the patch changes {change.old_path}, which does not exist", change.old_path)
    _check_blob(change.old_blob, old, "old", change.old_path)
    if change.op == "delete" and not change.hunks and (change.binary is not None or b"\x00" in old):
        # A binary deletion: the whole file goes, and what the patch says it deletes must be it.
        if change.binary is not None and change.binary != old:
            raise _fail("does_not_apply", "the binary file being deleted is not the one in the tree", change.old_path)
        if change.binary is None and (change.old_blob is None or set(change.old_blob) == {"0"}):
            raise _fail("binary", "a binary deletion must name the deleted blob (index line)", change.old_path)
        return [Write(change.old_path, None)]
    new_text = apply_hunks(_decode(old, change.old_path), change.hunks, change.old_path)
    if change.op == "delete":
        if new_text:
            raise _fail("does_not_apply", "a deletion must remove the whole file", change.old_path)
        return [Write(change.old_path, None)]
    data = _encode(new_text)
    _check_blob(change.new_blob, data, "new", change.path)
    if change.op == "rename":
        if read(change.path) is not None:
            raise _fail("path_exists", f"the rename target {change.path} already exists", change.path)
        return [Write(change.old_path, None), Write(change.path, data)]
    if data == old:
        raise _fail("empty_patch", "the change leaves the file as it was", change.path)
    return [Write(change.path, data)]


def apply_patch(patch: ParsedPatch, read: Callable[[str], bytes | None]) -> dict[str, bytes | None]:
    """All resulting writes of a patch, path -> new bytes (None = deleted)."""
    result: dict[str, bytes | None] = {}
    for change in patch.changes:
        for write in apply_change(change, read):
            result[write.path] = write.data
    return result
