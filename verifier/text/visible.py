"""The reason rule: a reason is text a reader can see.

Every reason a person or a role gives (a pushed revert's `Reason:` line, `rw revert --reason`, a
hold's approve or reject reason, `rw repair --reason`, a verdict decision, a review's reason) is
held to this one rule: after removing what renders as nothing, at least one character is left.
What renders as nothing: whitespace, control characters, format characters (Unicode category Cf:
zero-width space and joiners, word joiner, BOM, direction marks, tags), unassigned, surrogate and
private-use code points, combining marks with nothing to sit on, variation selectors, and the
filler letters that draw as blanks (Hangul fillers, the braille blank). A reason is also one
line of plain text (`control_problem`): it lands in a commit message and a ledger row's
description, where a line break would start a forged trailer or row and a control character
would act on the terminal that prints it.

`control_problem` is the rule for any text a client sends that others' terminals and logs will
print (reasons, thread messages, a trace manifest's model and skill version): no control
characters but the tab (and the line feed, or CR LF, where lines are allowed), no DEL or C1
controls, no bidirectional embeddings, overrides or isolates (they reorder the text around them:
"evil" shown as "live").
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


_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x85\u2028\u2029")


def control_problem(text: str, *, lines: bool = False) -> str | None:
    """None when `text` holds nothing that acts on a terminal or a log instead of showing (see the
    module docstring; `lines`: line feeds allowed); else what it holds and where, as the end of
    a sentence ("the body holds ...")."""
    if text.isprintable():  # the usual case, in C: no control, format or separator character but space
        return None
    for index in range(len(text)):
        what = _acting(text, index, lines)
        if what is not None:
            return f"holds {what} (U+{ord(text[index]):04X}) at character {index + 1}"
    return None


def shown(text: str, *, lines: bool = False) -> str:
    """`text` safe to print on a terminal: what `control_problem` would name is written as its
    escape (`\\x1b`, `\\u202e`, `\\n`), the rest as it is. For text stored before the rule (or
    quoted by a refusal) that a command prints for someone else to read."""
    if text.isprintable():
        return text
    return "".join(char.encode("unicode_escape").decode("ascii") if _acting(text, index, lines) else char
                   for index, char in enumerate(text))


def _acting(text: str, index: int, lines: bool) -> str | None:
    """What the character at `index` is, when it acts instead of showing; None when it shows."""
    char = text[index]
    if char == "\t" or (lines and (char == "\n" or (char == "\r" and text[index + 1:index + 2] == "\n"))):
        return None
    if char in _LINE_BREAKS:
        return "a line break"
    if char in _BIDI_CONTROLS:
        return "a bidirectional control"
    if unicodedata.category(char) == "Cc":
        return "a control character"
    return None


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
    """None for a reason with a visible character, on one line of plain text; else what is wrong
    with it, as the end of a sentence whose subject is what needs it ("needs a reason ...")."""
    if not has_visible_text(reason):
        seen = "empty" if not reason else f"only invisible characters ({_codes(reason)})"
        return f"needs a reason with at least one visible character; the reason given is {seen}"
    control = control_problem(reason)
    if control is not None:
        return f"needs a reason of plain text on one line; the reason given {control}"
    return None


def _codes(text: str) -> str:
    shown = ", ".join(f"U+{ord(char):04X}" for char in text[:8])
    return shown + (f" and {len(text) - 8} more" if len(text) > 8 else "")
