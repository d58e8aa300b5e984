"""The reason rule: a reason is text a reader can see.

Every reason a person or a role gives (a pushed revert's `Reason:` line, `rw revert --reason`, a
hold's approve or reject reason, `rw repair --reason`, a verdict decision, a review's reason) is
held to this one rule: after removing what renders as nothing, at least one character is left.
What renders as nothing: whitespace, control characters, format characters (Unicode category Cf:
zero-width space and joiners, word joiner, BOM, direction marks, tags), unassigned, surrogate and
private-use code points, combining marks with nothing to sit on, variation selectors, and the
filler letters that draw as blanks (Hangul fillers, the braille blank).
"""

from __future__ import annotations

import unicodedata

from verifier.errors import FormatError

_UNSEEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp", "Mn", "Me"})
# Letters and symbols that are drawn as blank space although their category says otherwise.
_BLANK_GLYPHS = frozenset({"\u115f", "\u1160", "\u3164", "\uffa0", "\u2800", "\u034f", "\u17b4", "\u17b5",
                           "\u180e", "\u2028", "\u2029"})


def is_visible(char: str) -> bool:
    """True when the character draws something a reader sees."""
    return unicodedata.category(char) not in _UNSEEN_CATEGORIES and char not in _BLANK_GLYPHS \
        and not char.isspace()


def has_visible_text(text: str) -> bool:
    """True when the text has at least one visible character (see the module docstring)."""
    return any(is_visible(char) for char in text)


def require_reason(reason: str, what: str, where: str | None = None) -> str:
    """The reason, stripped of surrounding whitespace, or a FormatError naming `what` needs one.

    `what` reads as the subject of the sentence, e.g. "a revert" or "a hold decision"."""
    problem = reason_problem(reason)
    if problem is None:
        return reason.strip()
    raise FormatError(f"{what} {problem}", where)


def reason_problem(reason: str) -> str | None:
    """None for a reason with a visible character; else what is wrong with it, as the end of a
    sentence whose subject is what needs it ("needs a reason with ...")."""
    if has_visible_text(reason):
        return None
    seen = "empty" if not reason else f"only invisible characters ({_codes(reason)})"
    return f"needs a reason with at least one visible character; the reason given is {seen}"


def _codes(text: str) -> str:
    shown = ", ".join(f"U+{ord(char):04X}" for char in text[:8])
    return shown + (f" and {len(text) - 8} more" if len(text) > 8 else "")
