"""`json.dumps(value, indent=1, ...)`, byte for byte, at the speed of json's C encoder.

The standard library writes an indented document with its pure-Python encoder (the C one knows
no indent), and every scoring landing writes several indented files (the use-score shards and
summary, the index of what rests on what). Here each container whose members are all scalars is
handed to the C encoder in one call, its item separator carrying the newline and the indent of
its depth, and only the containers above those are walked in Python. Anything the walk does not
know exactly as json does (a subclass of a builtin, a key that is not a string) falls back to
json.dumps, so the bytes are json's in every case.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from json.encoder import encode_basestring, encode_basestring_ascii

# Exact types only: a subclass of str or int may print otherwise, so it takes json's own road.
_SCALARS = frozenset({str, int, float, bool, type(None)})


class _UnusualError(Exception):
    """A value the fast walk leaves to json.dumps."""


class _Style:
    """One spelling (ensure_ascii, allow_nan, sort_keys): the C encoders per depth, made once."""

    def __init__(self, *, ensure_ascii: bool, allow_nan: bool, sort_keys: bool) -> None:
        self.ensure_ascii, self.allow_nan, self.sort_keys = ensure_ascii, allow_nan, sort_keys
        self.string: Callable[[str], str] = encode_basestring_ascii if ensure_ascii else encode_basestring
        self.flat: list[Callable[[object], str]] = []

    def encoder(self, depth: int) -> Callable[[object], str]:
        """The C encoder of a flat container at `depth`: its items one a line, indented below it."""
        while len(self.flat) <= depth:
            pad = "\n" + " " * (len(self.flat) + 1)
            self.flat.append(json.JSONEncoder(ensure_ascii=self.ensure_ascii, allow_nan=self.allow_nan,
                                              sort_keys=self.sort_keys, check_circular=False,
                                              separators=("," + pad, ": ")).encode)
        return self.flat[depth]

    def scalar(self, value: object) -> str:
        if type(value) is str:
            return self.string(value)
        if value is None:
            return "null"
        if value is True:
            return "true"
        if value is False:
            return "false"
        if type(value) is int:
            return int.__repr__(value)
        if type(value) is float and math.isfinite(value):
            return float.__repr__(value)
        raise _UnusualError  # NaN and the infinities: json's own words, or its error

    def node(self, value: object, depth: int) -> str:
        kind = type(value)
        if kind is dict:
            assert isinstance(value, dict)
            if not value:
                return "{}"
            close = "\n" + " " * depth
            if all(type(item) in _SCALARS for item in value.values()):
                text = self.encoder(depth)(value)
                return "{" + close + " " + text[1:-1] + close + "}"
            items = sorted(value.items()) if self.sort_keys else list(value.items())
            parts = []
            for key, item in items:
                if type(key) is not str:
                    raise _UnusualError
                rendered = self.scalar(item) if type(item) in _SCALARS else self.node(item, depth + 1)
                parts.append(self.string(key) + ": " + rendered)
            return "{" + close + " " + ("," + close + " ").join(parts) + close + "}"
        if kind is list or kind is tuple:
            assert isinstance(value, list | tuple)
            if not value:
                return "[]"
            close = "\n" + " " * depth
            if all(type(item) in _SCALARS for item in value):
                text = self.encoder(depth)(value)
                return "[" + close + " " + text[1:-1] + close + "]"
            parts = [self.scalar(item) if type(item) in _SCALARS else self.node(item, depth + 1) for item in value]
            return "[" + close + " " + ("," + close + " ").join(parts) + close + "]"
        raise _UnusualError


_STYLES: dict[tuple[bool, bool, bool], _Style] = {}


def dumps_indented(value: object, *, ensure_ascii: bool = True, allow_nan: bool = True,
                   sort_keys: bool = False, depth: int = 0) -> str:
    """What `json.dumps(value, indent=1, ensure_ascii=..., allow_nan=..., sort_keys=...)` returns;
    with `depth`, the value as it is spelt nested that deep in such a document."""
    key = (ensure_ascii, allow_nan, sort_keys)
    style = _STYLES.get(key)
    if style is None:
        style = _STYLES[key] = _Style(ensure_ascii=ensure_ascii, allow_nan=allow_nan, sort_keys=sort_keys)
    try:
        return style.scalar(value) if type(value) in _SCALARS else style.node(value, depth)
    except (_UnusualError, ValueError, TypeError, RecursionError):
        # json's own road: the same bytes, or the error json.dumps raises for this value. Nested,
        # each line is indented `depth` further (a string holds no raw newline: json escapes it).
        text = json.dumps(value, indent=1, ensure_ascii=ensure_ascii, allow_nan=allow_nan, sort_keys=sort_keys)
        return text.replace("\n", "\n" + " " * depth) if depth else text
