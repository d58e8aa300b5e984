"""Locate an excerpt in a source's normalized text: the exact-substring citation check.

This module's one job is to answer "where, exactly, does this excerpt occur?" and, when it does
not occur, "where is the closest passage, and how close is it?". Acceptance is decided only by
the exact match; the fuzzy search exists solely so a rejection can name the closest match offset
(design §11) and the author can fix the quote.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Final

from verifier.text.normalize import normalize

# rapidfuzz is imported by the functions that use it: only a missing excerpt needs the fuzzy
# search, and `rw check` of a correct folder should not pay its import (issue 26).

# Up to this many code points rapidfuzz's partial_ratio uses a bit-parallel scan that covers a
# whole 1 MB text in 10-20 ms, so short excerpts need no candidate narrowing.
_SHORT_EXCERPT: Final[int] = 64
# Texts this small are scanned whole whatever the excerpt length; narrowing only pays off above.
_SMALL_TEXT: Final[int] = 20_000
# Fuzzy alignment cost grows with the square of the excerpt length, so the search aligns at
# most this many leading code points; longer excerpts are scored in full at the chosen offset.
_PROBE_MAX: Final[int] = 500
# The paraphrase pass compares windows this wide: comparison cost grows with the square of the
# width, and the first few sentences of an excerpt are enough to rank windows.
_WINDOW_PROBE: Final[int] = 256
# Anchor pieces that occur more often than this are common phrases and say nothing about where
# the excerpt was meant to be.
_ANCHOR_MAX_HITS: Final[int] = 20
# At most this many pieces of a long excerpt are looked up: each lookup is a pass over the text.
_ANCHOR_MAX_PIECES: Final[int] = 48
# How many candidate offsets each narrowing method passes on to the full alignment.
_CANDIDATES_PER_METHOD: Final[int] = 8


@dataclass(frozen=True)
class ExcerptFound:
    """The excerpt occurs verbatim: text[start:end] == normalize(excerpt) (code point offsets)."""

    start: int
    end: int


@dataclass(frozen=True)
class ExcerptMissing:
    """The excerpt does not occur; the closest passage starts at closest_offset.

    similarity is rapidfuzz's 0-100 Indel similarity between the normalized excerpt and
    closest_text, which is text[closest_offset:closest_offset + len(closest_text)].
    """

    closest_offset: int
    similarity: float
    closest_text: str


def locate_excerpt(text: str, excerpt: str) -> ExcerptFound | ExcerptMissing:
    """Find the first exact occurrence of normalize(excerpt) in text.

    text must already be normalized (it is what extract_text returns); offsets refer to it. It is
    not re-normalized here because that would cost a pass over the whole source per excerpt and
    silently shift offsets if a caller passed raw text. An excerpt that normalizes to "" is
    missing: an empty quote cites nothing.
    """
    needle = normalize(excerpt)
    if not needle:
        return ExcerptMissing(closest_offset=0, similarity=0.0, closest_text="")
    start = text.find(needle)
    if start >= 0:
        return ExcerptFound(start=start, end=start + len(needle))
    return _closest(text, needle)


def _closest(text: str, needle: str) -> ExcerptMissing:
    """Return the passage of text most similar to needle, preferring the earliest on a tie."""
    if not text:
        return ExcerptMissing(closest_offset=0, similarity=0.0, closest_text="")
    # The search compares lower-cased copies so an excerpt that only differs in case is still
    # placed correctly; lower() is used only when it keeps every length, so offsets carry over.
    # The reported similarity is computed on the original strings.
    haystack, folded = text.lower(), needle.lower()
    if len(haystack) != len(text) or len(folded) != len(needle):
        haystack, folded = text, needle
    probe = folded[:_PROBE_MAX]
    if len(probe) <= _SHORT_EXCERPT or len(haystack) <= _SMALL_TEXT:
        offset, end = _align(probe, haystack, 0, len(haystack))[1:]
    else:
        # A window of half a probe either side of a candidate start absorbs insertions and
        # deletions in the excerpt.
        margin = len(probe) // 2 + 1
        starts: list[int] = []
        for start in _anchor_candidates(haystack, folded) + _window_candidates(haystack, probe):
            # A candidate this close to one already kept lies inside that one's search region.
            if all(abs(start - kept) > margin // 2 for kept in starts):
                starts.append(start)
        offset, end = max(
            (
                _align(probe, haystack, max(0, start - margin), start + len(probe) + margin)
                for start in starts
            ),
            # Highest score wins; among equal scores the earliest offset, so the result does not
            # depend on the order candidates were produced in.
            key=lambda hit: (hit[0], -hit[1]),
        )[1:]
    offset, end = _tighten(probe, haystack, offset, end)
    if len(needle) > len(probe):
        # Only the probe was aligned; report the full-length passage from that offset.
        end = offset + len(needle)
    closest = text[offset:end]
    from rapidfuzz import fuzz  # noqa: PLC0415 - see the imports

    return ExcerptMissing(offset, float(fuzz.ratio(needle, closest)), closest)


# Characters a reader cannot tell apart at a glance, by family. Naming them is help, never
# leniency: the exact rule still decides, so `’` never matches `'`.
_LOOK_ALIKES: Final[tuple[tuple[str, str], ...]] = (
    ("'\u2018\u2019\u201a\u201b\u2032`\u00b4", "curly vs straight single quote (apostrophe)"),
    ('"\u201c\u201d\u201e\u201f\u2033', "curly vs straight double quote"),
    ("-\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "hyphen, dash or minus sign"),
)
_MARK_CONTEXT: Final[int] = 24


def _char_name(char: str) -> str:
    return f"{char!r} (U+{ord(char):04X})" if char else "the end"


def first_difference(excerpt: str, closest: str, offset: int) -> str:
    """Where the excerpt first parts from the closest passage (`closest` begins at `offset` of the
    text), the excerpt with that character marked, and the look-alike it is when it is one
    (curly vs straight quotes, dashes, a decimal comma vs point). Pure; says nothing when the two
    do not differ."""
    needle = normalize(excerpt)
    index = next((i for i, (a, b) in enumerate(zip(needle, closest, strict=False)) if a != b),
                 min(len(needle), len(closest)))
    if index == len(needle) == len(closest):
        return ""
    mine = needle[index] if index < len(needle) else ""
    theirs = closest[index] if index < len(closest) else ""
    before = needle[max(0, index - _MARK_CONTEXT):index]
    after = needle[index + 1:index + 1 + _MARK_CONTEXT]
    marked = f"{'...' if index > _MARK_CONTEXT else ''}{before}[{mine}]{after}"
    text = (f"first difference at character {index} of the excerpt, marked [ ]: {marked!r}; the excerpt has "
            f"{_char_name(mine)}, the text has {_char_name(theirs)} at offset {offset + index}")
    family = _look_alike(needle, index, mine, theirs)
    if family:
        text += f" (a look-alike: {family}; quote the text's character exactly)"
    return text


def _look_alike(needle: str, index: int, mine: str, theirs: str) -> str:
    if not mine or not theirs:
        return ""
    for members, name in _LOOK_ALIKES:
        if mine in members and theirs in members:
            return name
    between_digits = index > 0 and needle[index - 1].isdigit() and needle[index + 1:index + 2].isdigit()
    if {mine, theirs} <= {".", ",", "\u00a0", "\u202f", " ", "'"} and between_digits:
        return "decimal or thousands separator, 6,400 vs 6.400"
    return ""


def _align(probe: str, text: str, lo: int, hi: int) -> tuple[float, int, int]:
    """Best partial alignment of probe inside text[lo:hi], as (score, start, end) into text."""
    from rapidfuzz import fuzz  # noqa: PLC0415 - see the imports

    hit = fuzz.partial_ratio_alignment(probe, text[lo:hi])
    if hit is None:  # only returned when a score_cutoff is not met; none is passed
        return 0.0, lo, lo
    return float(hit.score), lo + hit.dest_start, lo + hit.dest_end


def _tighten(probe: str, text: str, start: int, end: int) -> tuple[int, int]:
    """Trim text[start:end] to the characters the probe actually aligns with.

    partial_ratio compares windows exactly as long as the probe, so when a changed word makes the
    excerpt longer than the passage it misquotes, the best window can also take in a character
    or two before it (". The ..." instead of "The ..."). Dropping unmatched characters at both
    ends makes the offset point at where the passage begins.
    """
    from rapidfuzz.distance import Indel  # noqa: PLC0415 - see the imports

    matched = [op for op in Indel.opcodes(probe, text[start:end]) if op.tag == "equal"]
    if not matched:
        return start, end
    return start + matched[0].dest_start, start + matched[-1].dest_end


def _anchor_candidates(text: str, needle: str) -> list[int]:
    """Offsets where needle would start if one of its pieces occurs verbatim in text.

    A near miss (a word changed, a typo, a dropped clause) leaves most of the excerpt intact, so
    the surviving pieces occur exactly and agree on where the excerpt begins. Offsets are ranked
    by how many pieces vote for them.
    """
    size = max(12, min(32, len(needle) // 10))
    offsets = range(0, len(needle) - size + 1, size)
    # Spread the lookups evenly over a long excerpt rather than using only its beginning.
    stride = max(1, -(-len(offsets) // _ANCHOR_MAX_PIECES))
    votes: Counter[int] = Counter()
    for offset in offsets[::stride]:
        piece = needle[offset : offset + size]
        hits: list[int] = []
        at = text.find(piece)
        while at >= 0 and len(hits) <= _ANCHOR_MAX_HITS:
            hits.append(at)
            at = text.find(piece, at + 1)
        if len(hits) > _ANCHOR_MAX_HITS:
            continue
        for at in hits:
            votes[max(0, at - offset)] += 1
    ranked = sorted(votes.items(), key=lambda item: (-item[1], item[0]))
    return [start for start, _ in ranked[:_CANDIDATES_PER_METHOD]]


def _window_candidates(text: str, probe: str) -> list[int]:
    """Offsets of the windows of text most similar to the start of the probe.

    This catches passages with no verbatim piece in common with the excerpt (a paraphrase). Only
    the first _WINDOW_PROBE code points are compared, which keeps this pass near 30 ms on 1 MB
    whatever the excerpt length. Windows step by a quarter of their width, so the true position
    overlaps some window by at least three quarters, enough to rank it near the top.
    """
    head = probe[:_WINDOW_PROBE]
    width = len(head)
    step = max(1, width // 4)
    last = max(0, len(text) - width)
    starts = [*range(0, last, step), last]
    windows = [text[start : start + width] for start in starts]
    from rapidfuzz import fuzz, process  # noqa: PLC0415 - see the imports

    best = process.extract(head, windows, scorer=fuzz.ratio, limit=_CANDIDATES_PER_METHOD)
    ranked = sorted(best, key=lambda item: (-item[1], item[2]))
    return [starts[index] for _, _, index in ranked]
