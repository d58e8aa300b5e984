"""Strict parsing of a git-format unified diff into typed file changes. Pure.

Accepted: `diff --git` sections for regular files (mode 100644) that create, modify, delete or
rename, with text hunks (UTF-8 or not: other bytes are carried through exactly); and, for new
and deleted files, a `GIT binary patch` literal with its index line, framed exactly as git frames it
(how `git diff --binary` carries retained PDF bytes). `git format-patch`
output is accepted: its mail envelope is stripped. Refused, each with its own code: anything else (mode
changes, symlinks, submodules, executables, copies, binary deltas, "Binary files differ" without
data, quoted or unsafe names, a path named twice, headers that disagree, malformed hunks, an empty
patch). What is accepted here is then applied by `patch.apply` and checked again on the tree.
"""

from __future__ import annotations

import base64
import re
import zlib
from dataclasses import dataclass
from typing import Literal

from verifier.constants import MAX_PATCH_BYTES
from verifier.constants import MAX_PATCH_FILES as MAX_FILES
from verifier.errors import Rejected, Rejection
from verifier.patch.paths import path_problem

REGULAR = "100644"
_MODE_NAMES = {
    "120000": ("symlink", "a symbolic link"),
    "160000": ("submodule", "a submodule (gitlink)"),
    "100755": ("mode", "an executable file"),
    "040000": ("mode", "a directory entry"),
}
# Line numbers and counts are bounded (nine digits): far past any file we accept, and int() of
# a hostile thousands-digit number is refused or slow.
_HUNK_RE = re.compile(r"^@@ -(\d{1,9})(?:,(\d{1,9}))? \+(\d{1,9})(?:,(\d{1,9}))? @@(?: .*)?$")
_INDEX_RE = re.compile(r"^index ([0-9a-f]{7,40})\.\.([0-9a-f]{7,40})(?: ([0-7]{6}))?$")
_NO_NEWLINE = "\\ No newline at end of file"

ChangeOp = Literal["create", "modify", "delete", "rename"]


@dataclass(frozen=True)
class HunkLine:
    tag: str  # " ", "-" or "+"
    text: str  # without its line ending
    newline: bool  # False when followed by "\ No newline at end of file"


@dataclass(frozen=True)
class Hunk:
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: tuple[HunkLine, ...]


@dataclass(frozen=True)
class FileChange:
    op: ChangeOp
    path: str  # the path written (the new path of a rename)
    old_path: str | None  # the path read (None for create)
    hunks: tuple[Hunk, ...]
    old_blob: str | None  # abbreviated blob ids from the `index` line, when present
    new_blob: str | None
    # A binary create: the full new content. A binary delete: the content being deleted (from
    # git's reverse section), checked against the tree; None when the patch does not carry it.
    binary: bytes | None = None


@dataclass(frozen=True)
class ParsedPatch:
    changes: tuple[FileChange, ...]
    size: int

    def touched(self) -> list[str]:
        """Every path the patch reads or writes, for the stale-base comparison."""
        paths: list[str] = []
        for change in self.changes:
            paths.append(change.path)
            if change.old_path and change.old_path != change.path:
                paths.append(change.old_path)
        return paths


def _fail(code: str, message: str, line: int | None = None) -> Rejected:
    where = f"patch.diff:{line}" if line is not None else "patch.diff"
    return Rejected(Rejection(code, message, where))


def _check_mode(mode: str, line: int) -> None:
    if mode != REGULAR:
        code, what = _MODE_NAMES.get(mode, ("mode", f"mode {mode}"))
        raise _fail(code, f"{what} is not allowed; only regular files (mode {REGULAR})", line)


def _check_path(path: str, line: int) -> str:
    problem = path_problem(path)
    if problem is not None:
        raise _fail(problem.code, problem.message, line)
    return path


def _strip_prefix(token: str, prefix: str, line: int) -> str:
    if token.startswith('"'):
        raise _fail("bad_path", "quoted path names (special characters) are not allowed", line)
    if not token.startswith(prefix):
        raise _fail("malformed_patch", f"expected a path starting with {prefix!r}, got {token!r}", line)
    return token[len(prefix) :]


def _decode_base85_line(line: str, number: int) -> bytes:
    if not line:
        raise _fail("malformed_patch", "empty line inside binary data", number)
    size_char = line[0]
    if "A" <= size_char <= "Z":
        size = ord(size_char) - ord("A") + 1
    elif "a" <= size_char <= "z":
        size = ord(size_char) - ord("a") + 27
    else:
        raise _fail("malformed_patch", "bad length character in binary data", number)
    if len(line) - 1 != (size + 3) // 4 * 5:
        # As git: the length byte must match the characters on the line exactly.
        raise _fail("malformed_patch", f"binary data line says {size} bytes but carries {len(line) - 1} "
                    "characters", number)
    try:
        decoded = base64.b85decode(line[1:])
    except ValueError as exc:
        raise _fail("malformed_patch", f"bad base85 in binary data: {exc}", number) from exc
    return decoded[:size]


class _Reader:
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.i = 0

    def peek(self) -> str | None:
        return self.lines[self.i] if self.i < len(self.lines) else None

    def take(self) -> str:
        line = self.lines[self.i]
        self.i += 1
        return line

    @property
    def number(self) -> int:
        return self.i + 1


def _read_literal(reader: _Reader, max_size: int, *, reverse: bool) -> bytes:
    """One `literal <size>` (or, in the reverse section, `delta <size>`) block, checked as git does:
    exact line lengths, a complete zlib stream (its checksum included), the stated size."""
    start = reader.number
    header = reader.take() if reader.peek() is not None else ""
    if header.startswith("delta ") and not reverse:
        raise _fail("binary", "binary deltas are not allowed; send the whole file (literal)", start)
    match = re.match(r"^(literal|delta) (\d{1,9})$", header)
    if not match:
        raise _fail("malformed_patch", "expected 'literal <size>' after 'GIT binary patch'", start)
    size = int(match.group(2))
    if size > max_size:
        raise _fail("oversize", f"binary file of {size} bytes exceeds {max_size}", start)
    chunks: list[bytes] = []
    while (line := reader.peek()) is not None and line != "":
        chunks.append(_decode_base85_line(reader.take(), reader.number - 1))
    if reader.peek() == "":
        reader.take()
    inflater = zlib.decompressobj()
    try:
        data = inflater.decompress(b"".join(chunks), size + 1)
    except zlib.error as exc:
        raise _fail("malformed_patch", f"binary data does not inflate: {exc}", start) from exc
    if len(data) != size:
        raise _fail("malformed_patch", f"binary data inflates to {len(data)} bytes, not {size}", start)
    if not inflater.eof or inflater.unused_data:
        raise _fail("malformed_patch", "binary data is not one complete zlib stream (truncated or trailing "
                    "bytes)", start)
    return data


def _read_binary(reader: _Reader, max_size: int) -> tuple[bytes, bytes | None]:
    """(forward contents, reverse contents or None). A reverse section (git writes one) is
    checked as strictly as the forward one; a delta there has no contents of its own (None)."""
    data = _read_literal(reader, max_size, reverse=False)
    reverse = None
    if (line := reader.peek()) is not None and line.startswith(("literal ", "delta ")):
        is_literal = line.startswith("literal ")
        old = _read_literal(reader, max_size, reverse=True)
        reverse = old if is_literal else None
    return data, reverse


def _read_hunks(reader: _Reader) -> list[Hunk]:
    hunks: list[Hunk] = []
    while (line := reader.peek()) is not None and line.startswith("@@"):
        number = reader.number
        match = _HUNK_RE.match(reader.take())
        if not match:
            raise _fail("malformed_patch", "malformed hunk header", number)
        old_start, new_start = int(match.group(1)), int(match.group(3))
        old_count = int(match.group(2)) if match.group(2) is not None else 1
        new_count = int(match.group(4)) if match.group(4) is not None else 1
        lines: list[HunkLine] = []
        old_seen = new_seen = 0
        while old_seen < old_count or new_seen < new_count:
            raw = reader.peek()
            if raw is None:
                raise _fail("malformed_patch", "hunk ends before its line counts are met", number)
            reader.take()
            # Some tools strip the single space of an empty context line; git accepts that too.
            tag, text = (" ", "") if raw == "" else (raw[0], raw[1:])
            if tag == " ":
                old_seen += 1
                new_seen += 1
            elif tag == "-":
                old_seen += 1
            elif tag == "+":
                new_seen += 1
            else:
                raise _fail("malformed_patch", f"unexpected line in hunk: {raw[:40]!r}", reader.number - 1)
            newline = True
            if reader.peek() == _NO_NEWLINE:
                reader.take()
                newline = False
            lines.append(HunkLine(tag, text, newline))
        if old_seen != old_count or new_seen != new_count:
            raise _fail("malformed_patch", "hunk line counts do not match its header", number)
        if reader.peek() == _NO_NEWLINE:
            raise _fail("malformed_patch", "misplaced 'No newline' marker", reader.number)
        hunks.append(Hunk(old_start, old_count, new_start, new_count, tuple(lines)))
    return hunks


def _binary_change(reader: _Reader, op: ChangeOp, path: str, blobs: tuple[str | None, str | None],
                   max_binary: int) -> FileChange:
    """The FileChange of a `GIT binary patch` section (its header line already taken)."""
    number = reader.number - 1
    old_blob, new_blob = blobs
    if op not in ("create", "delete"):
        raise _fail("binary", "binary data is allowed only for new and deleted files", number)
    if new_blob is None:
        # As git: a binary patch needs the index line (the blob id its contents are checked against).
        raise _fail("binary", "a binary patch needs its `index <old>..<new>` line, as `git diff --binary` "
                    "writes it", number)
    data, reverse = _read_binary(reader, max_binary)
    if op == "create":
        return FileChange(op, path, None, (), old_blob, new_blob, binary=data)
    if data:
        raise _fail("malformed_patch", f"{path}: a binary deletion must leave nothing (literal 0)", number)
    # The deleted file's contents, when the reverse section carries them, are checked on apply.
    return FileChange(op, path, path, (), old_blob, new_blob, binary=reverse)


def _read_section(reader: _Reader, max_binary: int) -> FileChange:  # noqa: C901, PLR0912, PLR0915 - git's header grammar, one branch per header line it allows
    number = reader.number
    header = reader.take()
    tokens = header.split(" ")
    if len(tokens) != 4 or tokens[:2] != ["diff", "--git"]:
        raise _fail("malformed_patch", "expected 'diff --git a/<path> b/<path>' (no spaces in paths)", number)
    a_path = _check_path(_strip_prefix(tokens[2], "a/", number), number)
    b_path = _check_path(_strip_prefix(tokens[3], "b/", number), number)
    op: ChangeOp = "modify"
    rename_from = rename_to = None
    old_blob = new_blob = None
    while (line := reader.peek()) is not None and not line.startswith(
        ("--- ", "diff --git ", "GIT binary patch", "Binary files ", "@@")
    ):
        number = reader.number
        reader.take()
        if line.startswith("new file mode "):
            _check_mode(line[len("new file mode ") :], number)
            op = "create"
        elif line.startswith("deleted file mode "):
            _check_mode(line[len("deleted file mode ") :], number)
            op = "delete"
        elif line.startswith(("old mode ", "new mode ")):
            mode = line.split(" ")[-1]
            if mode != REGULAR:
                _check_mode(mode, number)
            raise _fail("mode", "mode changes are not allowed", number)
        elif line.startswith("index "):
            match = _INDEX_RE.match(line)
            if not match:
                raise _fail("malformed_patch", "malformed index line", number)
            old_blob, new_blob = match.group(1), match.group(2)
            if match.group(3):
                _check_mode(match.group(3), number)
        elif line.startswith(("similarity index ", "dissimilarity index ")):
            continue
        elif line.startswith("rename from "):
            rename_from = _check_path(line[len("rename from ") :], number)
        elif line.startswith("rename to "):
            rename_to = _check_path(line[len("rename to ") :], number)
        elif line.startswith(("copy from ", "copy to ")):
            raise _fail("rename", "copies are not allowed", number)
        else:
            raise _fail("malformed_patch", f"unknown extended header {line[:60]!r}", number)
    if rename_from is not None or rename_to is not None:
        if rename_from != a_path or rename_to != b_path or op != "modify":
            raise _fail("rename", "rename headers disagree with the diff --git line", number)
        op = "rename"
    elif a_path != b_path:
        raise _fail("malformed_patch", "a/ and b/ paths differ without a rename", number)

    nxt = reader.peek()
    if nxt is not None and nxt.startswith("Binary files "):
        raise _fail("binary", "a binary change without data; use `git diff --binary`", reader.number)
    if nxt is not None and nxt.startswith("GIT binary patch"):
        reader.take()
        return _binary_change(reader, op, b_path, (old_blob, new_blob), max_binary)

    hunks: list[Hunk] = []
    if nxt is not None and nxt.startswith("--- "):
        number = reader.number
        minus = reader.take()[4:]
        plus_line = reader.peek()
        if plus_line is None or not plus_line.startswith("+++ "):
            raise _fail("malformed_patch", "'---' line not followed by '+++'", number)
        plus = reader.take()[4:]
        expect_minus = "/dev/null" if op == "create" else f"a/{a_path}"
        expect_plus = "/dev/null" if op == "delete" else f"b/{b_path}"
        if minus != expect_minus or plus != expect_plus:
            raise _fail(
                "malformed_patch",
                f"file header says --- {minus} +++ {plus}; expected --- {expect_minus} +++ {expect_plus}",
                number,
            )
        hunks = _read_hunks(reader)
    if not hunks and op == "modify":
        raise _fail("empty_patch", f"{b_path}: a change with no content", number)
    if op == "create" and any(line.tag != "+" for hunk in hunks for line in hunk.lines):
        raise _fail("malformed_patch", f"{b_path}: a new file's hunk may only add lines", number)
    if op == "delete" and any(line.tag != "-" for hunk in hunks for line in hunk.lines):
        raise _fail("malformed_patch", f"{a_path}: a deletion's hunk may only remove lines", number)
    old_path = None if op == "create" else a_path
    return FileChange(op, b_path, old_path, tuple(hunks), old_blob, new_blob)


_MAIL_FROM = re.compile(r"^From [0-9a-f]{40} Mon Sep 17 00:00:00 2001$")
_SIGNATURE = re.compile(r"^[0-9][0-9A-Za-z.+-]*$")


def strip_mail_envelope(lines: list[str]) -> list[str]:
    """The diff inside `git format-patch` output: the mail headers and message up to the `---`
    line, the diffstat, and the trailing `-- ` signature are dropped. Anything else is returned
    as it was (and the parser decides)."""
    if not lines or not _MAIL_FROM.match(lines[0]):
        return lines
    body = next((index for index, line in enumerate(lines) if line.startswith("diff --git ")), None)
    if body is None or "---" not in lines[:body]:
        return lines
    tail = len(lines)
    while tail > body and lines[tail - 1] == "":
        tail -= 1
    if tail - 2 > body and lines[tail - 2] == "-- " and _SIGNATURE.match(lines[tail - 1]):
        tail -= 2
    return [*lines[body:tail], ""]


def _not_a_section(line: str, number: int) -> Rejected:
    if any("\udc80" <= char <= "\udcff" for char in line):
        return _fail("binary", "the patch is not text: its headers are not UTF-8", number)
    return _fail("malformed_patch", f"expected 'diff --git', got {line[:60]!r}", number)


def _check_whole(data: bytes, max_bytes: int) -> None:
    """What the patch as a whole must be before its lines are read."""
    if len(data) > max_bytes:
        raise _fail("oversize", f"patch is {len(data)} bytes; the limit is {max_bytes}")
    if not data.strip():
        raise _fail("empty_patch", "the patch is empty")
    if b"\x00" in data:
        raise _fail("binary", "the patch contains NUL bytes; binary content needs `git diff --binary`")
    if not data.endswith(b"\n"):
        # git apply calls it corrupt: a last line cut short, or a file's missing newline not marked
        # (`\ No newline at end of file`), would otherwise be guessed at.
        raise _fail("malformed_patch", "the patch does not end with a newline (truncated? `git diff` ends every "
                                       "line with one)", data.count(b"\n") + 1)


def parse_patch(data: bytes, *, max_bytes: int = MAX_PATCH_BYTES) -> ParsedPatch:
    """Parse untrusted patch bytes; raise Rejected naming the line at fault."""
    _check_whole(data, max_bytes)
    # Text files need not be UTF-8: bytes that are not are carried through as they are
    # (surrogateescape), so such a file is patched byte-exactly. Names and headers stay ASCII.
    text = data.decode("utf-8", "surrogateescape")
    lines = strip_mail_envelope(text.split("\n"))
    if lines and lines[-1] == "":
        lines.pop()
    reader = _Reader(lines)
    changes: list[FileChange] = []
    seen: set[str] = set()
    while reader.peek() is not None:
        line = reader.peek()
        if line == "":
            reader.take()
            continue
        if not (line or "").startswith("diff --git "):
            raise _not_a_section(line or "", reader.number)
        change = _read_section(reader, max_bytes)
        for path in {change.path, change.old_path} - {None}:
            assert path is not None
            if path in seen:
                raise _fail("duplicate_path", f"{path} appears twice in the patch", reader.number)
            seen.add(path)
        changes.append(change)
        if len(changes) > MAX_FILES:
            raise _fail("oversize", f"the patch changes more than {MAX_FILES} files")
    if not changes:
        raise _fail("empty_patch", "the patch changes no file")
    return ParsedPatch(tuple(changes), len(data))
