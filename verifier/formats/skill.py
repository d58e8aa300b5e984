"""The researchwiki skill file: its per-kind sections and the version derived from its bytes.

`skill/SKILL.md` holds one section per leaf kind, delimited by HTML comments a Markdown reader
hides and a tool can find without parsing Markdown:

    <!-- rw-skill:begin extract -->
    ## Extract
    ...
    <!-- rw-skill:end extract -->

Each marker sits alone on its line. The improvement loop replaces exactly one section's body (the
lines between its two markers) and nothing else, so a proposal can be checked by comparing
everything outside that section byte for byte. `skill_version` is computed from the file's bytes,
so the version a trace manifest carries can never drift from the text the agent read.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from verifier.errors import FormatError

SKILL_KINDS = ("scout", "extract", "skeptic", "link", "review", "guide")
_MARKER_RE = re.compile(r"^<!-- rw-skill:(begin|end) ([a-z]+) -->$")


@dataclass(frozen=True)
class Section:
    """One kind's section: `body` is the text between the markers (markers excluded)."""

    kind: str
    begin: int  # offset of the first byte after the begin marker's line
    end: int  # offset of the first byte of the end marker's line
    body: str


def skill_version(data: bytes) -> str:
    """`sk-` and the first 12 hex digits of the file's SHA-256: the version is the content."""
    return "sk-" + hashlib.sha256(data).hexdigest()[:12]


def sections(text: str, where: str = "skill/SKILL.md") -> dict[str, Section]:
    """Every kind's section, checked: each kind exactly once, markers paired and not nested."""
    found: dict[str, Section] = {}
    open_kind: str | None = None
    open_at = 0
    offset = 0
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        match = _MARKER_RE.match(line.rstrip("\r\n"))
        if match:
            side, kind = match.groups()
            if kind not in SKILL_KINDS:
                raise FormatError(f"unknown leaf kind {kind!r} in a section marker", f"{where}:{number}")
            if side == "begin":
                if open_kind is not None:
                    raise FormatError(f"section {kind!r} begins inside section {open_kind!r}", f"{where}:{number}")
                if kind in found:
                    raise FormatError(f"section {kind!r} appears twice", f"{where}:{number}")
                open_kind, open_at = kind, offset + len(line)
            else:
                if open_kind != kind:
                    raise FormatError(f"end of section {kind!r} without its begin", f"{where}:{number}")
                found[kind] = Section(kind, open_at, offset, text[open_at:offset])
                open_kind = None
        offset += len(line)
    if open_kind is not None:
        raise FormatError(f"section {open_kind!r} is never ended", where)
    missing = [kind for kind in SKILL_KINDS if kind not in found]
    if missing:
        raise FormatError(f"no section for leaf kind(s) {', '.join(missing)}", where)
    return found


def replace_section(text: str, kind: str, body: str, where: str = "skill/SKILL.md") -> str:
    """The file with exactly `kind`'s section body replaced; the body may not hold markers."""
    if any(_MARKER_RE.match(line) for line in body.splitlines()):
        raise FormatError("a section body may not contain section markers", where)
    section = sections(text, where)[kind]
    if body and not body.endswith("\n"):
        body += "\n"
    return text[: section.begin] + body + text[section.end :]


def outside_sections_equal(before: str, after: str, kind: str) -> bool:
    """True when `after` differs from `before` at most inside `kind`'s section."""
    old, new = sections(before)[kind], sections(after)[kind]
    return before[: old.begin] == after[: new.begin] and before[old.end :] == after[new.end :]
