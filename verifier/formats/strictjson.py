"""One reading of JSON from untrusted bytes: the parser every boundary shares.

The CLI, the service's HTTP bodies and trace ingest (manifest.json, every events.jsonl line) all
read JSON through loads() here, so a document means one thing to every part of the verifier and
to any other reader. What Python's json module accepts but RFC 8259 leaves ambiguous is refused:
- a key repeated in one object (readers disagree on which value wins);
- NaN, Infinity, -Infinity, and numbers too large to be finite as a double (1e400);
- a lone surrogate escape (\\ud800 without its pair): not a Unicode character, and UTF-8
  writers cannot store it;
- bytes that are not UTF-8 (a byte-order mark included), and nesting past MAX_DEPTH.
"""

from __future__ import annotations

import json
import math

MAX_DEPTH = 64
# An integer no format of ours needs beyond 64 bits; past ~300 digits it is not even finite as a
# double, and int() of a hostile many-digit number is slow.
_MAX_INT_DIGITS = 19


class StrictJSONError(ValueError):
    """JSON that is refused: what was found, and where (a JSON pointer-ish path or a position)."""


# A JSON value as json.loads returns it: what a typed reader narrows, field by field.
Json = None | bool | int | float | str | list["Json"] | dict[str, "Json"]

def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    value: dict[str, object] = {}
    for key, item in pairs:
        if key in value:
            raise StrictJSONError(f"duplicate key {key[:60]!r} in one object")
        value[key] = item
    return value


def _no_constant(name: str) -> object:
    raise StrictJSONError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise StrictJSONError(f"number {text[:40]} is too large to be finite")
    return number


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > _MAX_INT_DIGITS:
        raise StrictJSONError(f"integer {text[:20]}... has more than {_MAX_INT_DIGITS} digits")
    return int(text)


def _has_lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _check_strings(value: object) -> None:
    """Refuse lone surrogates in keys and strings, and nesting deeper than MAX_DEPTH."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise StrictJSONError(f"nesting deeper than {MAX_DEPTH} levels")
        if isinstance(node, str):
            if _has_lone_surrogate(node):
                raise StrictJSONError("a string holds a lone surrogate escape (not a Unicode character)")
        elif isinstance(node, dict):
            stack.extend((key, depth + 1) for key in node)
            stack.extend((item, depth + 1) for item in node.values())
        elif isinstance(node, list):
            stack.extend((item, depth + 1) for item in node)


def loads(data: bytes | str) -> object:
    """Parse one JSON document strictly; StrictJSONError (a ValueError) says what is refused."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise StrictJSONError(f"not valid UTF-8 at byte {exc.start}") from exc
    else:
        text = data
    if text.startswith("\ufeff"):
        raise StrictJSONError("starts with a byte-order mark")
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant,
                           parse_float=_finite_float, parse_int=_bounded_int)
    except StrictJSONError:
        raise
    except RecursionError as exc:
        raise StrictJSONError(f"nesting deeper than {MAX_DEPTH} levels") from exc
    except ValueError as exc:
        raise StrictJSONError(str(exc)[:200]) from exc
    _check_strings(value)
    return value
