"""Normalize text so a quote and its source compare equal when a reader would see the same words.

This module's one job is the normalization rule, written once in NORMALIZATION and applied by
normalize(). Both the derived source text and every excerpt pass through it before an exact
substring check, so the rule must stay small and predictable: it never folds quotes, joins
hyphenated words, changes case or drops characters other than whitespace and the byte-order
mark. Anything more would let an excerpt "match" text the source does not contain.
"""

from __future__ import annotations

import re
import unicodedata

NORMALIZATION = (
    "NFC; byte-order marks (U+FEFF) removed; CRLF and CR to LF; every run of Unicode whitespace to one space; "
    "strip ends"
)

# `\s` on a str pattern matches exactly the characters for which str.isspace() is true (checked
# over every code point on CPython 3.11): Unicode White_Space plus U+001C..U+001F. Using the same
# definition as str.strip() keeps "collapse" and "strip ends" consistent with each other.
_WHITESPACE_RUN = re.compile(r"\s+")


def normalize(text: str) -> str:
    """Apply NORMALIZATION to text and return the result.

    The function is idempotent: normalize(normalize(t)) == normalize(t).
    """
    # NFC first so a precomposed "é" in the source and a decomposed "e\u0301" in an excerpt become
    # the same code points; offsets are then counted in the composed form.
    text = unicodedata.normalize("NFC", text)
    # A byte-order mark is an encoding artefact, not text: a quote copied with one from a file,
    # or a source decoded without stripping it, must still compare equal.
    text = text.replace("\ufeff", "")
    # Line-ending folding is subsumed by the whitespace collapse below, but it is kept as its own
    # step so the code reads exactly like the published rule.
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _WHITESPACE_RUN.sub(" ", text)
    return text.strip()
