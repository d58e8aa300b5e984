"""Scan trace bytes for secrets: detect-secrets' token detectors, plain, JSON-escaped or base64.

This module's one job is scan_bytes(). It is pure (no I/O), deterministic, and linear in the
input: every pass over the bytes is a C-level regex or bytes search, and Python only runs per
trigger occurrence, per escaped line and per base64 run, never per line of the input.

Three views of the same bytes are scanned with the same detectors (verifier.secrets.patterns):
- plain: the bytes as they are;
- json-escape: lines holding an escape that can hide secret characters (\\u0020..\\u007f or
  \\/) are JSON-unescaped first, so "\\u0041KIA..." reads as "AKIA...";
- base64: runs of base64 long enough to carry a secret are decoded (all of them in one call).
A hit carries the detector's name, the file name and the byte offset in the ORIGINAL bytes
where the secret, or the escape / base64 quad that encodes its first byte, starts. It never
carries the secret: hits end up in ledgers and error messages.
"""

from __future__ import annotations

import binascii
import re
from bisect import bisect_right
from dataclasses import dataclass

from verifier.secrets.patterns import TRIGGERS, Detector

# Preference when the same secret (kind, offset) is seen through more than one view.
_ENCODINGS = ("plain", "json-escape", "base64")


@dataclass(frozen=True)
class SecretHit:
    """One secret found: which detector, in which file, where. Never the secret itself."""

    kind: str  # the detect-secrets detector's secret_type, e.g. "AWS Access Key"
    file: str  # the name passed to scan_bytes, e.g. "events.jsonl"
    offset: int  # byte offset in the original bytes where the (possibly encoded) secret starts
    encoding: str  # "plain" | "json-escape" | "base64"


# --------------------------------------------------------------------------------------------
# plain
# --------------------------------------------------------------------------------------------

# Bytes that open some stock matches without being part of the secret (Artifactory's pattern
# starts with the delimiter before the token).
_LEADING_DELIMITERS = b" \t\r\n\f\v=:\"'"


def _offset(match: re.Match[bytes], group: int) -> int:
    if group and match.start(group) >= 0:
        return match.start(group)
    token = match.group()
    return match.start() + len(token) - len(token.lstrip(_LEADING_DELIMITERS))


def _run_detector(detector: Detector, data: bytes, lo: int, hi: int, shift: int,
                  found: set[tuple[str, int]]) -> None:
    """Add (kind, shift + offset) for each match of detector in data[lo:hi]."""
    for pattern, group in zip(detector.patterns, detector.value_groups, strict=True):
        for match in pattern.finditer(data, lo, hi):
            if detector.validate is not None and not detector.validate(
                match.group().decode("ascii", "replace")
            ):
                continue
            found.add((detector.kind, shift + _offset(match, group)))


# A JSON string holds "\n", "\t" and "\"" where the text had a newline, a tab and a quote, so
# `KEY=value` after "\n" reads as `nKEY=value` and `"value"` as `\"value\"` to the stock
# patterns that look at the bytes around a secret. For those, the window is also read through
# this view, which rewrites the escapes in place and at the same length: offsets are unchanged.
_QUOTE_BEFORE_TOKEN = re.compile(rb'\\"(?=[A-Za-z0-9+/=_-])')
_SAME_LENGTH_UNESCAPES = ((b"\\n", b"\n\n"), (b"\\r", b"\r\r"), (b"\\t", b"\t\t"))


def _unescaped_view(data: bytes) -> bytes:
    for escape, text in _SAME_LENGTH_UNESCAPES:
        data = data.replace(escape, text)
    # An escaped quote keeps its quote next to the token it delimits: `\"abc` -> ` "abc`,
    # `abc\"` -> `abc" `, so both `="value"` and `'value'`-style stock patterns still see it.
    data = _QUOTE_BEFORE_TOKEN.sub(b' "', data)
    return data.replace(b'\\"', b'" ')


def _scan_plain(data: bytes) -> set[tuple[str, int]]:
    """(kind, offset) of every stock detector match in data."""
    found: set[tuple[str, int]] = set()
    lowered: bytes | None = None
    size = len(data)
    for trigger_pass in TRIGGERS:
        haystack = data
        if trigger_pass.fold_case:
            # bytes.lower() maps A-Z only, so offsets are unchanged.
            lowered = data.lower() if lowered is None else lowered
            haystack = lowered
        for hit in trigger_pass.regex.finditer(haystack):
            at = hit.start()
            for trigger in trigger_pass.triggers:
                if len(trigger_pass.triggers) > 1 and not trigger.regex.match(haystack, at):
                    continue
                # The window is the trigger's reach, clipped to its line: detect-secrets
                # matches within one line, and the clip bounds the work on long lines.
                lo = max(at - trigger.back, data.rfind(b"\n", max(0, at - trigger.back), at) + 1)
                newline = data.find(b"\n", at, at + trigger.ahead)
                hi = newline if newline >= 0 else min(size, at + trigger.ahead)
                for detector in trigger.detectors:
                    _run_detector(detector, data, lo, hi, 0, found)
                if trigger.json_context and data.find(b"\\", lo, hi) >= 0:
                    # One byte before the window, for the stock lookbehinds and ^.
                    start = max(0, lo - 1)
                    view = _unescaped_view(data[start:hi])
                    for detector in trigger.detectors:
                        _run_detector(detector, view, lo - start, len(view), start, found)
    return found


# --------------------------------------------------------------------------------------------
# base64
# --------------------------------------------------------------------------------------------

# The shortest secret detect-secrets knows ("BEGIN PRIVATE KEY", 17 bytes) takes 24 base64
# characters; shorter runs cannot hide one, and skipping them skips most words and short ids.
MIN_BASE64_RUN = 20
# Runs are found on a mask of the data (base64 alphabet -> "a", anything else -> " ") with
# bytes.find, which skips a run-free stretch far faster than a character-class regex scans it.
_BASE64_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_MASK = bytes(0x61 if byte in _BASE64_ALPHABET else 0x20 for byte in range(256))
_RUN = b"a" * MIN_BASE64_RUN
# A run of lowercase hex (a sha256, a commit id) is never base64 of text carrying a secret:
# such base64 puts every third decoded byte in 0x68..0x7f or above 0xcf, and every detector's
# secret has three bytes in a row below 0x68 (upper case, digits, "a".."g", punctuation).
_HEX = re.compile(rb"[0-9a-f]+")
# Decodes to "\n\n\n": keeps decoded blobs apart so no match spans two of them.
_SEPARATOR = b"CgoK"


@dataclass
class _Segment:
    quad: int  # index of the segment's first quad in the concatenated base64 stream
    origin: int  # offset of that quad's first character in the scanned bytes


def _line_break(data: bytes, at: int) -> int:
    """Length of the line break at data[at:], or 0.

    Wrapped base64 (`base64`, PEM, MIME) breaks lines of whole quads with a newline or CRLF,
    or inside a JSON string with the escapes for them.
    """
    byte = data[at : at + 1]
    if byte == b"\n":
        return 1
    if byte == b"\r":
        return 2 if data.startswith(b"\r\n", at) else 0
    if byte == b"\\":
        if data.startswith(b"\\n", at):
            return 2
        if data.startswith(b"\\r\\n", at):
            return 4
    return 0


def _base64_blobs(data: bytes) -> list[list[tuple[int, int]]]:
    """Blobs of base64 in data: lists of (start, end) lines, all but the last of whole quads.

    Padding is left out of the spans; a one-line padded run starts where its quads start.
    """
    mask = data.translate(_MASK)
    size = len(data)
    blobs: list[list[tuple[int, int]]] = []
    pos = 0
    while (start := mask.find(_RUN, pos)) >= 0:
        end = mask.find(b" ", start + MIN_BASE64_RUN)
        end = size if end < 0 else end
        pos = end
        if start > 0 and data[start - 1] == 0x5C:
            # Right after a backslash the first letter is an escape ("\n", "\t"), not base64.
            start += 1
        if _HEX.fullmatch(data, start, end):
            continue
        lines = [(start, end)]
        padded = data.startswith(b"=", end)
        # Follow a wrapped blob: a full line of whole quads, unpadded, then a line break.
        while not padded and (end - start) % 4 == 0 and (brk := _line_break(data, end)):
            start = end + brk
            end = mask.find(b" ", start)
            end = size if end < 0 else end
            if end == start:
                break
            lines.append((start, end))
            padded = data.startswith(b"=", end)
            pos = end
        if len(lines) == 1 and padded:
            # The padding says how many characters the last quad lacks.
            missing = 2 if data.startswith(b"==", end) else 1
            lines[0] = (start + (end - start + missing) % 4, end)
        blobs.append(lines)
    return blobs


def _scan_base64(data: bytes) -> set[tuple[str, int]]:
    """(kind, offset in data) of secrets inside base64 runs of data."""
    blobs = _base64_blobs(data)
    if not blobs:
        return set()
    stream: list[bytes] = []
    segments: list[_Segment] = []
    junk: list[tuple[int, int]] = []  # decoded (start, length) of filler bytes to blank out
    quads = 0
    for blob in blobs:
        for start, end in blob:
            piece = data[start:end]
            whole, rest = divmod(len(piece), 4)
            if rest == 1:  # a lone sextet carries no byte
                piece, rest = piece[:-1], 0
            if rest:
                # Complete the quad with 'A's; the bytes they add are filler, blanked below.
                piece += b"A" * (4 - rest)
                junk.append(((quads + whole) * 3 + rest - 1, 4 - rest))
            segments.append(_Segment(quads, start))
            stream.append(piece)
            quads += len(piece) // 4
        stream.append(_SEPARATOR)
        quads += 1
    decoded = bytearray(binascii.a2b_base64(b"".join(stream)))
    for at, length in junk:
        decoded[at : at + length] = b"\n" * length
    found: set[tuple[str, int]] = set()
    starts = [segment.quad for segment in segments]
    for kind, offset in _scan_plain(bytes(decoded)):
        quad = offset // 3
        segment = segments[bisect_right(starts, quad) - 1]
        found.add((kind, segment.origin + 4 * (quad - segment.quad)))
    return found


# --------------------------------------------------------------------------------------------
# JSON escapes
# --------------------------------------------------------------------------------------------

# Escapes that can stand for a character of a secret: printable ASCII written as \u00XX, and
# "\/". Plain \n, \" and \u2019-style escapes are what every JSON writer emits and hide nothing.
_HIDING_ESCAPE = re.compile(rb"\\(?:u00[2-7][0-9a-fA-F]|/)")
_ESCAPE = re.compile(rb'\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt]))')
_SIMPLE = {b'"': b'"', b"\\": b"\\", b"/": b"/", b"b": b"\b", b"f": b"\f", b"n": b"\n",
           b"r": b"\r", b"t": b"\t"}


@dataclass
class _Piece:
    decoded: int  # offset of the piece in the decoded buffer
    origin: int  # offset in the original bytes
    raw: bool  # copied verbatim (offsets move together) or one escape (maps to its start)


def _unescape_lines(data: bytes) -> tuple[bytes, list[_Piece]]:
    """The JSON-unescaped text of every line holding a hiding escape, joined by newlines."""
    out: list[bytes] = []
    pieces: list[_Piece] = []
    size = 0
    pos = 0
    while True:
        hit = _HIDING_ESCAPE.search(data, pos)
        if hit is None:
            break
        line_start = data.rfind(b"\n", pos, hit.start()) + 1 or pos
        line_end = data.find(b"\n", hit.end())
        line_end = len(data) if line_end < 0 else line_end
        cursor = line_start
        for escape in _ESCAPE.finditer(data, line_start, line_end):
            if escape.start() > cursor:
                pieces.append(_Piece(size, cursor, raw=True))
                out.append(data[cursor : escape.start()])
                size += escape.start() - cursor
            code = escape.group(1)
            char = (chr(int(code, 16)).encode("utf-8", "surrogatepass") if code is not None
                    else _SIMPLE[escape.group(2)])
            pieces.append(_Piece(size, escape.start(), raw=False))
            out.append(char)
            size += len(char)
            cursor = escape.end()
        pieces.append(_Piece(size, cursor, raw=True))
        out.append(data[cursor:line_end] + b"\n")
        size += line_end - cursor + 1
        pos = line_end + 1
    return b"".join(out), pieces


def _scan_json_escapes(data: bytes) -> tuple[set[tuple[str, int]], set[tuple[str, int]]]:
    """(plain-in-decoded, base64-in-decoded) secrets of escaped lines, as original offsets."""
    decoded, pieces = _unescape_lines(data)
    if not pieces:
        return set(), set()
    starts = [piece.decoded for piece in pieces]

    def origin(offset: int) -> int:
        piece = pieces[bisect_right(starts, offset) - 1]
        return piece.origin + (offset - piece.decoded if piece.raw else 0)

    plain = {(kind, origin(offset)) for kind, offset in _scan_plain(decoded)}
    hidden = {(kind, origin(offset)) for kind, offset in _scan_base64(decoded)}
    return plain, hidden


# --------------------------------------------------------------------------------------------


def scan_bytes(data: bytes, *, name: str) -> list[SecretHit]:
    """Every secret in data, ordered by offset then kind; each (kind, offset) reported once."""
    views: dict[str, set[tuple[str, int]]] = {
        "plain": _scan_plain(data),
        "base64": _scan_base64(data),
    }
    escaped, escaped_base64 = _scan_json_escapes(data)
    views["json-escape"] = escaped
    views["base64"] |= escaped_base64
    best: dict[tuple[str, int], str] = {}
    for encoding in reversed(_ENCODINGS):  # later writes win: plain over json-escape over base64
        for key in views[encoding]:
            best[key] = encoding
    return [SecretHit(kind, name, offset, encoding)
            for (offset, kind), encoding in sorted(((o, k), e) for (k, o), e in best.items())]
