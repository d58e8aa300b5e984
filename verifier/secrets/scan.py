"""Scan trace bytes for secrets: detect-secrets' token detectors, plain, JSON-escaped or base64.

This module's one job is scan_bytes(). It is pure (no I/O), deterministic, and linear in the
input: every pass over the bytes is a C-level regex or bytes search (the triggers of every
detector in one RE2 search); Python runs per candidate trigger, per base64 run and per escape
near a hiding escape, never per line of the input.

The same detectors (verifier.secrets.patterns) read three views of the bytes:
- plain: the bytes as they are. Detectors that look at the bytes around a secret (a quote, a
  line start) also read their window with JSON's \\n, \\t and \\" unescaped in place, since a
  trace logs `KEY=value` inside a JSON string as `\\nKEY=value`;
- json-escape: text near an escape that can hide a secret's characters (\\u0020..\\u007f, \\/,
  and the escapes of invisible or look-alike characters: \\u200b, \\uff21, a surrogate pair)
  is JSON-unescaped and rescanned, then read through the Unicode layer, so "\\u0041KIA..."
  reads as "AKIA..." and "AKIA\\u200b..." as "AKIA...";
- base64: runs of base64 long enough to carry a secret are decoded (all in one call) and
  rescanned, also inside the unescaped text.
Removing invisible characters comes after every decoding, never before: the Unicode layer also
reads the UTF-8 text that base64 and hex decode to.
A hit names the detector, the file and the byte offset in the ORIGINAL bytes where the secret
starts, or where the escape or base64 quad encoding its first byte starts. It never carries the
secret: hits end up in ledgers and error messages. The same (kind, offset) seen through several
views is reported once, preferring plain, then json-escape, then base64.

Input crafted to make the stock patterns rescan the same bytes from thousands of starts (a
megabyte of "eyJeyJ...") exhausts a work budget proportional to its size; the scan then stops
and fails closed with a FLOOD hit rather than run for minutes.
"""

from __future__ import annotations

import binascii
import re
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate

import re2  # type: ignore[import-untyped]

from verifier.secrets.keywords import KIND as KEYWORD_KIND
from verifier.secrets.keywords import PATTERN_BY_FIRST as KEYWORD_BY_FIRST
from verifier.secrets.keywords import PREFILTER_SOURCE as KEYWORD_PREFILTER
from verifier.secrets.keywords import assignment
from verifier.secrets.layers import (
    PieceMap,
    disguise_escapes,
    escaped_char,
    gzip_members,
    hex_layer,
    text_layer,
    unicode_layer,
    utf8_text_layer,
)
from verifier.secrets.patterns import TRIGGERS, Detector, Trigger, TriggerPass, prefilter_source
from verifier.secrets.tokens import KIND as TOKEN_KIND
from verifier.secrets.tokens import token_offsets

# Preference when the same secret (kind, offset) is seen through more than one view.
_ENCODINGS = ("plain", "json-escape", "unicode", "hex", "base64")
# Layers of encoding read beneath the outer one: 1 reads two layers (base64 of base64, base64 of
# escaped JSON, gzip then base64, escaped JSON inside JSON). Each layer is smaller than the one
# it came from, except gzip, whose inflation is capped per byte: the work stays linear.
NESTING = 1
GZIP_PER_BYTE = 8
GZIP_FLOOR = 1 << 16


@dataclass(frozen=True)
class SecretHit:
    """One secret found: which detector, in which file, where. Never the secret itself."""

    # The detect-secrets detector's secret_type, e.g. "AWS Access Key"; with FLOOD appended
    # when the scan gave up on a crafted flood of candidates of that kind (see WORK_PER_BYTE).
    kind: str
    file: str  # the name passed to scan_bytes, e.g. "events.jsonl"
    offset: int  # byte offset in the original bytes where the (possibly encoded) secret starts
    encoding: str  # "plain" | "json-escape" | "unicode" | "hex" | "base64" (the outermost disguise)


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


def _record(detector: Detector, match: re.Match[bytes] | None, group: int, shift: int,
            found: set[tuple[str, int]]) -> None:
    if match is None or (detector.validate is not None and not detector.validate(
            match.group().decode("ascii", "replace"))):
        return
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


# Why RE2 (google-re2): CPython's `re` has no multi-pattern search, so the ~20 trigger passes
# each walked the whole input (about 15 ms per pass on 20 MB); RE2 runs one DFA over all the
# triggers at once. It only says where to look: the trigger regexes and stock patterns decide.
# The keyword-context patterns (keywords.py) ride on the same search.
# Latin-1: the input is bytes, not UTF-8; RE2's default would let a class such as [^:/@\s]
# match a whole UTF-8 character and never a lone byte such as 0x80.
_OPTIONS = re2.Options()
_OPTIONS.encoding = re2.Options.Encoding.LATIN1
PREFILTER = re2.compile(prefilter_source(TRIGGERS) + b"|" + KEYWORD_PREFILTER, _OPTIONS)
_UNANCHORED = re2._Anchor.UNANCHORED


def _passes_by_first(passes: tuple[TriggerPass, ...]) -> tuple[tuple[tuple[int, int, TriggerPass], ...], ...]:
    """The passes (with their index) whose trigger can start with each byte value, in pass
    order; then, one byte further on, those with a trigger whose lead (TriggerSpec.lead) is that
    byte. Built pass by pass, since it is built at every start (issue 26)."""
    lowered = bytes(range(256)).lower()
    heads: list[list[tuple[int, int, TriggerPass]]] = [[] for _ in range(256)]
    leads: list[list[tuple[int, int, TriggerPass]]] = [[] for _ in range(256)]
    for index, trigger_pass in enumerate(passes):
        for byte in range(256):
            if trigger_pass.first == (lowered[byte] if trigger_pass.fold_case else byte):
                heads[byte].append((0, index, trigger_pass))
        patterns = [re.compile(trigger.lead) for trigger in trigger_pass.triggers if trigger.lead]
        for byte in range(256) if patterns else ():
            if any(pattern.fullmatch(bytes([byte])) for pattern in patterns):
                leads[byte].append((1, index, trigger_pass))
    return tuple(tuple(heads[byte] + leads[byte]) for byte in range(256))


_PASSES_BY_FIRST = _passes_by_first(TRIGGERS)

# Work, in bytes a stock pattern may walk, allowed per byte scanned. Each trigger occurrence
# costs the span its patterns may walk (a search window counts as quadratic in its length,
# since the stock patterns rescan from each start). An honest trace uses about 0.2 units
# per byte; only a flood of candidates, such as a megabyte of "eyJeyJeyJ...", runs out.
WORK_PER_BYTE = 32
WORK_FLOOR = 1 << 26
# When the work runs out the scan stops and fails closed with this hit, so a crafted input
# cannot buy super-linear time: an honest trace never carries such a flood.
FLOOD = " (unchecked: too many candidates)"


def _verify(trigger: Trigger, data: bytes, at: int, lo: int, hi: int,
            found: set[tuple[str, int]], resume: dict[re.Pattern[bytes], int]) -> int:
    """Run the trigger's detectors on its window data[lo:hi]; return the work spent.

    resume holds, per stock pattern, where its last match in data ended: like a search, a
    pattern never matches inside its own previous match.
    """
    views = [(data, 0)]
    if trigger.json_context and data.find(b"\\", lo, hi) >= 0:
        start = max(0, lo - 1)  # one byte before the window, for the stock lookbehinds and ^
        views.append((_unescaped_view(data[start:hi]), start))
    work = 0
    for text, shift in views:
        first, last, end = lo - shift, at - shift, hi - shift
        for detector in trigger.detectors:
            for pattern, group in zip(detector.patterns, detector.value_groups, strict=True):
                if trigger.search:
                    work += (end - first) * (1 + (end - first) // 16)
                    for match in pattern.finditer(text, first, end):
                        _record(detector, match, group, shift, found)
                    continue
                # The match starts within `back` of the trigger: try exactly those starts,
                # leftmost first and never inside a match, as a search would.
                begin = max(first, resume.get(pattern, 0) - shift)
                while begin <= last:
                    work += end - begin
                    attempt = pattern.match(text, begin, end)
                    if attempt is None:
                        begin += 1
                        continue
                    _record(detector, attempt, group, shift, found)
                    resume[pattern] = attempt.end() + shift
                    begin = max(attempt.end(), begin + 1)
    return work


def _keyword_at(keyword: re.Pattern[bytes], at: int, data: bytes, lowered: bytes,
                next_keyword: dict[re.Pattern[bytes], int], found: set[tuple[str, int]]) -> None:
    """Try a keyword-context pattern at `at` as its finditer over lowered would: never inside
    its own last match."""
    if at < next_keyword.get(keyword, 0) or (match := keyword.match(lowered, at)) is None:
        return
    next_keyword[keyword] = match.end()
    if (value := assignment(match, data, lowered)) is not None:
        found.add((KEYWORD_KIND, value))


def _scan_plain(data: bytes) -> set[tuple[str, int]]:
    """(kind, offset) of every stock detector match in data.

    One RE2 search (PREFILTER) lists, in order, every position where some trigger may match;
    there each pass whose first byte is there checks its own trigger regex, as its finditer
    over the whole data would (a hit consumes its head, so a pass never hits inside its last
    hit). Each trigger occurrence has its detectors tried where their match can start, within
    a window of the trigger's reach clipped to its line (detect-secrets matches within one
    line). Line bounds are found once per line.
    """
    found: set[tuple[str, int]] = set()
    budget = WORK_PER_BYTE * len(data) + WORK_FLOOR
    # bytes.lower() maps A-Z only, so offsets are unchanged.
    lowered = data.lower()
    size = len(data)
    resumes: list[dict[re.Pattern[bytes], int]] = [{} for _ in TRIGGERS]
    next_hit = [0] * len(TRIGGERS)
    next_keyword: dict[re.Pattern[bytes], int] = {}
    line_start, line_end = 0, -1
    # RE2's own call, not the wrapper's search(): the wrapper builds a generator and a match
    # object per call, which cost a third of the search over an honest trace.
    search = PREFILTER._regexp.Match
    pos = 0
    while True:
        candidate = search(_UNANCHORED, data, pos, size)[0][0]
        if candidate < 0:
            break
        pos = candidate + 1
        keyword = KEYWORD_BY_FIRST.get(lowered[candidate])
        if keyword is not None:
            _keyword_at(keyword, candidate, data, lowered, next_keyword, found)
        for shift, index, trigger_pass in _PASSES_BY_FIRST[data[candidate]]:
            at = candidate + shift
            if at < next_hit[index] or at >= size:
                continue
            haystack = lowered if trigger_pass.fold_case else data
            hit = trigger_pass.regex.match(haystack, at)
            if hit is None:
                continue
            next_hit[index] = hit.end()
            if at > line_end:
                line_start = data.rfind(b"\n", max(line_end, 0), at) + 1 or max(line_end, 0)
                line_end = data.find(b"\n", at)
                line_end = size if line_end < 0 else line_end
            following = haystack[at + 1] if at + 1 < size else -1
            several = len(trigger_pass.triggers) > 1
            for trigger in trigger_pass.by_next.get(following, trigger_pass.any_next):
                if several and not trigger.regex.match(haystack, at):
                    continue
                lo = max(at - trigger.back, line_start)
                hi = min(at + trigger.ahead, line_end)
                budget -= _verify(trigger, data, at, lo, hi, found, resumes[index])
                if budget < 0:
                    found.add((trigger.detectors[0].kind + FLOOD, at))
                    return found
    found.update((TOKEN_KIND, at) for at in token_offsets(data))
    return found


# --------------------------------------------------------------------------------------------
# base64
# --------------------------------------------------------------------------------------------

# The shortest secret detect-secrets knows ("BEGIN PRIVATE KEY", 17 bytes) takes 24 base64
# characters; shorter runs cannot hide one, and skipping them skips most words and short ids.
MIN_BASE64_RUN = 20
# Runs are found on a mask of the data (base64 alphabet -> "a", anything else -> " ") with
# bytes.find, which skips a run-free stretch far faster than a character-class regex scans it.
# Both alphabets: standard (+/) and URL-safe (-_); the stream is decoded as standard after
# mapping -_ to +/ (no run mixes them in an honest encoder's output, and a mixed run decodes
# to garbage that holds nothing).
_BASE64_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_"
_URL_SAFE = bytes.maketrans(b"-_", b"+/")
_MASK = bytes(0x61 if byte in _BASE64_ALPHABET else 0x20 for byte in range(256))
_RUN = b"a" * MIN_BASE64_RUN
# A run of lowercase hex (a sha256, a commit id) is never base64 of text carrying a secret:
# such base64 puts every third decoded byte in 0x68..0x7f or above 0xcf, and every detector's
# secret has three bytes in a row below 0x68 (upper case, digits, "a".."g", punctuation).
_HEX = re.compile(rb"[0-9a-f]+")
# Nor is a run with no upper-case letter and no digit besides hex (a path, a snake_case or
# kebab-case name): base64 of 17 or more bytes of text has one with odds of a billion to one.
_NAME = re.compile(rb"[a-z/_+-]+")
# Both tests in one match, hex first (group 1): one call per run rather than two.
_NOT_BASE64 = re.compile(b"(" + _HEX.pattern + b")|" + _NAME.pattern)
_LINE_BREAKS = (b"\n", b"\r\n", b"\\n", b"\\r\\n")
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
    for brk in _LINE_BREAKS:
        if data.startswith(brk, at):
            return len(brk)
    return 0


def _base64_blobs(data: bytes, hex_runs: list[tuple[int, int]] | None = None) -> list[list[tuple[int, int]]]:
    """Blobs of base64 in data: lists of (start, end) lines, all but the last of whole quads.

    Padding is left out of the spans; a one-line padded run starts where its quads start.
    Runs of lowercase hex are not base64; they are appended to hex_runs when it is given.
    """
    mask = data.translate(_MASK)
    find, skip, size = mask.find, _NOT_BASE64.fullmatch, len(data)  # locals: this loop runs per run
    blobs: list[list[tuple[int, int]]] = []
    pos = 0
    while (start := find(_RUN, pos)) >= 0:
        end = find(b" ", start + MIN_BASE64_RUN)
        if end < 0:
            end = size
        pos = end
        if start and data[start - 1] == 0x5C:
            # Right after a backslash the first letter is an escape ("\n", "\t"), not base64.
            start += 1
        if (skipped := skip(data, start, end)) is not None:
            if skipped.lastindex and hex_runs is not None:  # hex: the hex layer reads it
                hex_runs.append((start, end))
            continue
        lines = [(start, end)]
        padded = data.startswith(b"=", end)
        # Follow a wrapped blob: a full line of whole quads, unpadded, then a line break.
        while not padded and (end - start) % 4 == 0 and (brk := _line_break(data, end)):
            start = end + brk
            end = find(b" ", start)
            if end < 0:
                end = size
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


def _scan_base64(data: bytes, depth: int = 0, hex_runs: list[tuple[int, int]] | None = None) -> set[tuple[str, int]]:
    """(kind, offset in data) of secrets inside base64 runs of data.

    With depth > 0 the decoded bytes are read through every view again (base64 of base64, of
    escaped JSON, of hex...), and gzip streams in them are inflated and read too.
    """
    blobs = _base64_blobs(data, hex_runs)
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
    decoded = bytearray(binascii.a2b_base64(b"".join(stream).translate(_URL_SAFE)))
    for at, length in junk:
        decoded[at : at + length] = b"\n" * length
    found: set[tuple[str, int]] = set()
    starts = [segment.quad for segment in segments]

    def origin(offset: int) -> int:
        quad = offset // 3
        segment = segments[bisect_right(starts, quad) - 1]
        return segment.origin + 4 * (quad - segment.quad)

    plain_bytes = bytes(decoded)
    found.update((kind, origin(offset)) for kind, offset in _scan_text(plain_bytes, depth))
    if depth > 0:
        for at, inflated in gzip_members(plain_bytes, GZIP_PER_BYTE * len(plain_bytes) + GZIP_FLOOR):
            found.update((kind, origin(at)) for kind, _ in _deep(inflated, depth - 1))
    return found


def _scan_text(decoded: bytes, depth: int) -> set[tuple[str, int]]:
    """Secrets in the text runs of decoded bytes; with depth > 0, under one more layer too.

    Every secret is text, so only runs of printable text are read: the bytes of images and
    archives (most of what base64 carries) cost one mask-and-find pass and nothing more.
    """
    # Decoded first, then the Unicode layer: base64 of text holding a zero-width space.
    found = _scan_layer(utf8_text_layer(decoded))
    layer = text_layer(decoded)
    if layer is None:
        return found
    text, mapping = layer
    inner = _scan_plain(text) if depth <= 0 else _deep(text, depth - 1)
    return found | {(kind, mapping.origin(offset)) for kind, offset in inner}


# --------------------------------------------------------------------------------------------
# JSON escapes
# --------------------------------------------------------------------------------------------

# Escapes that can stand for a character of a secret, or hide one: printable ASCII written as
# \u00XX, "\/", and the escapes of disguising characters (a zero-width space as \u200b, a
# full-width letter as \uff21, a tag character as a surrogate pair; layers.disguise_escapes):
# the text around them is unescaped first, then read through the Unicode layer. Plain \n, \"
# and \u2019-style escapes are what every JSON writer emits and hide nothing.
_HIDING_ESCAPE = re.compile(rb"\\(?:u00[2-7][0-9a-fA-F]|/|" + disguise_escapes() + rb")")
# A surrogate pair is one character (group 1 holds both halves), so a tag character or a
# mathematical letter escaped as two halves decodes to its UTF-8, not to two lone surrogates.
_ESCAPE = re.compile(rb'\\(?:u([dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|[0-9a-fA-F]{4})'
                     rb'|(["\\/bfnrt]))')
_SIMPLE = {b'"': b'"', b"\\": b"\\", b"/": b"/", b"b": b"\b", b"f": b"\f", b"n": b"\n",
           b"r": b"\r", b"t": b"\t"}
# How much text around a hiding escape is unescaped and rescanned: more than any realistic
# token and the context its stock pattern reads (only a JWT of over 4 KB could outgrow it).
_ESCAPE_REACH = 4096
_ESCAPE_CHUNK = 1 << 20


def _hiding_regions(data: bytes) -> list[tuple[int, int]]:
    """Spans of data within _ESCAPE_REACH of a hiding escape, on its line, merged."""
    regions: list[tuple[int, int]] = []
    pos, line_end = 0, -1
    while (hit := _HIDING_ESCAPE.search(data, pos)) is not None:
        line_start = data.rfind(b"\n", max(pos, hit.start() - _ESCAPE_REACH), hit.start()) + 1
        start = max(line_start, pos, hit.start() - _ESCAPE_REACH)
        if hit.end() > line_end:  # once per line, however many regions it holds
            line_end = data.find(b"\n", hit.end())
            line_end = len(data) if line_end < 0 else line_end
        end = min(line_end, hit.end() + _ESCAPE_REACH)
        # Grow the region a reach at a time while its last reach holds another hiding escape:
        # a step per reach, not per escape, however dense they are.
        while end < line_end and _HIDING_ESCAPE.search(data, end - _ESCAPE_REACH, end):
            end = min(line_end, end + _ESCAPE_REACH)
        # Cut long regions into overlapping chunks, to bound the memory of one unescape: a
        # secret within reach of its escape lies whole in one chunk.
        step = _ESCAPE_CHUNK - 2 * _ESCAPE_REACH
        regions.extend((at, min(end, at + _ESCAPE_CHUNK)) for at in range(start, end, step))
        pos = end
    return regions


def _escape_text(code: bytes | None, simple: bytes | None) -> bytes:
    if code is not None:
        return escaped_char(code).encode("utf-8", "surrogatepass")
    return _SIMPLE[simple or b"\\"]


def _unescape(data: bytes, regions: list[tuple[int, int]]) -> tuple[bytes, list[int], list[int]]:
    """The JSON-unescaped text of the regions, joined by newlines, and how to map it back.

    The map is two parallel lists over pieces that alternate raw text (even index; moves with
    the original) and one escape (odd index; every byte maps to the escape's first byte):
    each piece's offset in the decoded text and in the original bytes. Built with re.split and
    comprehensions rather than a Python loop per escape, since a PHP-style writer escapes
    every "/".
    """
    out: list[bytes] = []
    decoded_at: list[int] = []
    original_at: list[int] = []
    for start, end in regions:
        parts = _ESCAPE.split(data[start:end])  # text, code, simple, text, code, simple, ..., text
        texts, codes, simples = parts[0::3], parts[1::3], parts[2::3]
        chars = [_escape_text(code, simple) for code, simple in zip(codes, simples, strict=True)]
        texts[-1] += b"\n"  # regions are kept apart, like lines
        pieces: list[bytes] = [b""] * (len(texts) + len(chars))
        pieces[0::2], pieces[1::2] = texts, chars
        lengths: list[int] = [0] * len(pieces)
        lengths[0::2] = map(len, texts)
        lengths[1::2] = [2 + len(code) if code is not None else 2 for code in codes]
        base = decoded_at[-1] + len(out[-1]) if out else 0
        decoded_at.extend(accumulate(map(len, pieces[:-1]), initial=base))
        original_at.extend(accumulate(lengths[:-1], initial=start))
        out.extend(pieces)
    return b"".join(out), decoded_at, original_at


def _scan_json_escapes(data: bytes, depth: int = 0) -> tuple[set[tuple[str, int]], set[tuple[str, int]]]:
    """(plain, base64) secrets seen once the text around hiding escapes is unescaped.

    Offsets are in the original bytes. With depth > 0 the unescaped text is read through every
    view again (escaped JSON inside JSON, hex, Unicode disguises); those count as plain.
    """
    regions = _hiding_regions(data)
    if not regions:
        return set(), set()
    decoded, decoded_at, original_at = _unescape(data, regions)

    def origin(offset: int) -> int:
        piece = bisect_right(decoded_at, offset) - 1
        # Raw text (even pieces) moves with the original; an escape maps to its backslash.
        return original_at[piece] + (0 if piece % 2 else offset - decoded_at[piece])

    if depth <= 0:
        # Unescaped first, then the Unicode layer: an escaped zero-width space is removed too.
        seen = _scan_plain(decoded) | _scan_layer(unicode_layer(decoded))
        plain = {(kind, origin(offset)) for kind, offset in seen}
        hidden = {(kind, origin(offset)) for kind, offset in _scan_base64(decoded)}
        return plain, hidden
    views = _views(decoded, depth - 1)
    hidden = {(kind, origin(offset)) for kind, offset in views.pop("base64")}
    plain = {(kind, origin(offset)) for found in views.values() for kind, offset in found}
    return plain, hidden


# --------------------------------------------------------------------------------------------


def _scan_layer(layer: tuple[bytes, PieceMap] | None, *, unicode: bool = False) -> set[tuple[str, int]]:
    """(kind, offset in the layer's input) of secrets in a decoded layer; with `unicode`, also
    in the decoded text's own Unicode layer (hex of text holding a zero-width space)."""
    if layer is None:
        return set()
    decoded, mapping = layer
    found = _scan_plain(decoded)
    if unicode:
        found |= _scan_layer(unicode_layer(decoded))
    return {(kind, mapping.origin(offset)) for kind, offset in found}


def _views(data: bytes, depth: int) -> dict[str, set[tuple[str, int]]]:
    """(kind, offset) of secrets per view of data; views nest `depth` more layers deep."""
    hex_runs: list[tuple[int, int]] = []
    views: dict[str, set[tuple[str, int]]] = {
        "plain": _scan_plain(data),
        "base64": _scan_base64(data, depth, hex_runs),
        "unicode": _scan_layer(unicode_layer(data)),
    }
    views["hex"] = _scan_layer(hex_layer(data, hex_runs), unicode=True)
    escaped, escaped_base64 = _scan_json_escapes(data, depth)
    views["json-escape"] = escaped
    views["base64"] |= escaped_base64
    return views


def _deep(data: bytes, depth: int) -> set[tuple[str, int]]:
    return {hit for found in _views(data, depth).values() for hit in found}


def scan_bytes(data: bytes, *, name: str) -> list[SecretHit]:
    """Every secret in data, ordered by offset then kind; each (kind, offset) reported once."""
    views = _views(data, NESTING)
    best: dict[tuple[str, int], str] = {}
    for encoding in reversed(_ENCODINGS):  # later writes win: plain over json-escape over ... base64
        for key in views[encoding]:
            best[key] = encoding
    return [SecretHit(kind, name, offset, encoding)
            for (offset, kind), encoding in sorted(((o, k), e) for (k, o), e in best.items())]
