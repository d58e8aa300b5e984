"""json.dumps(indent=1) through the C encoder (verifier.formats.indentjson): for any JSON-like
value, in every spelling the verifier uses and nested at any depth, the same text as json.dumps,
or the same error."""

from __future__ import annotations

import enum
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.formats.indentjson import dumps_indented


class _Level(enum.IntEnum):
    LOW = 1


class _Name(str):
    pass


SCALARS = (st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5)
           | st.sampled_from([_Level.LOW, _Name("x"), 1e16, -0.0, "é\u2028\"\\\n"]))
KEYS = st.text(max_size=4) | st.sampled_from([_Name("k")])
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4)
                      | st.tuples(inner, inner), max_leaves=24)


def _outcome(write: object) -> object:
    try:
        return write() if callable(write) else write
    except (ValueError, TypeError) as exc:
        return type(exc)


@settings(max_examples=200, deadline=None)
@given(VALUES, st.booleans(), st.booleans(), st.booleans())
def test_indented_dump_is_json_dumps_text_or_its_error(value: object, ensure_ascii: bool, allow_nan: bool,
                                                      sort_keys: bool) -> None:
    expected = _outcome(lambda: json.dumps(value, indent=1, ensure_ascii=ensure_ascii, allow_nan=allow_nan,
                                           sort_keys=sort_keys))
    got = _outcome(lambda: dumps_indented(value, ensure_ascii=ensure_ascii, allow_nan=allow_nan,
                                          sort_keys=sort_keys))
    assert got == expected


@settings(max_examples=200, deadline=None)
@given(VALUES, st.integers(0, 3), st.booleans())
def test_a_value_dumped_at_a_depth_is_its_text_nested_that_deep(value: object, depth: int, sort_keys: bool) -> None:
    nested = value
    for _ in range(depth):
        nested = {"k": nested}
    expected = _outcome(lambda: json.dumps(nested, indent=1, sort_keys=sort_keys))
    try:
        text = dumps_indented(value, sort_keys=sort_keys, depth=depth)
    except (ValueError, TypeError) as exc:
        assert expected is type(exc)
        return
    for level in reversed(range(depth)):
        text = "{\n" + " " * (level + 1) + '"k": ' + text + "\n" + " " * level + "}"
    assert text == expected


def test_mixed_key_types_fail_to_sort_as_json_fails() -> None:
    value = {"a": [1, {1: 2, "b": 3}]}
    assert _outcome(lambda: dumps_indented(value, sort_keys=True)) is TypeError
    assert dumps_indented({1: {2.5: None}}) == json.dumps({1: {2.5: None}}, indent=1)
