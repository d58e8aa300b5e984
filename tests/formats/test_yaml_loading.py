"""The safe loader made once (verifier.formats.frontmatter._SafeLoader) reads every text as
ruamel's own `YAML(typ="safe")` does: the same values of the same types, or a refusal of the same
kind; and load_yaml's refusals still come first."""

from __future__ import annotations

import io
from datetime import date, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from verifier.errors import FormatError
from verifier.formats.frontmatter import _documents, load_yaml


def _stock(text: str) -> list[object] | type[BaseException]:
    """ruamel's own safe loader's answer: the documents, or the kind of error it raised."""
    try:
        return list(YAML(typ="safe").load_all(io.StringIO(text)))
    except Exception as exc:  # the kind is what is compared
        return type(exc)


def _ours(text: str) -> list[object] | type[BaseException]:
    try:
        return _documents(text)
    except Exception as exc:
        return type(exc)


def _typed(value: object) -> object:
    """A value with every scalar's type beside it: 1 and 1.0 and True compare equal in Python."""
    if isinstance(value, dict):
        return {repr(_typed(k)): _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(item) for item in value]
    return (type(value).__name__, repr(value))


def _assert_read_alike(text: str) -> None:
    stock, ours = _stock(text), _ours(text)
    if isinstance(stock, type):
        assert ours is stock
    else:
        assert isinstance(ours, list)
        assert [_typed(d) for d in ours] == [_typed(d) for d in stock]


# Plain scalars of every kind YAML 1.2 resolves, and some that look like one.
SCALARS = ["1", "-7", "+12", "0x1F", "0o17", "012", "1.5", "-.5", "1e5", "1.0e+5", ".inf", "-.Inf", ".NaN",
           "true", "False", "TRUE", "yes", "no", "on", "null", "Null", "~", "", "2026-01-01",
           "2026-01-01 10:00:00", "2026-01-01t10:00:00.5+02:00", "1:20", "text", "two words", "'quoted'",
           '"dq \\u00e9"', "<<", "=", "-", "1_000", "0b101", ".5.", "12:30:45"]

documents = st.recursive(
    st.sampled_from(SCALARS),
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=4).map(lambda items: "[" + ", ".join(items) + "]"),
        st.dictionaries(st.sampled_from(["a", "b", "key", "1", "true", "x y"]), inner, min_size=1, max_size=4)
        .map(lambda pairs: "{" + ", ".join(f"{k}: {v}" for k, v in pairs.items()) + "}"),
    ),
    max_leaves=12,
)
block = st.dictionaries(st.sampled_from(["a", "b", "when", "n", "list", "1"]), documents, min_size=1, max_size=5).map(
    lambda pairs: "".join(f"{k}: {v}\n" for k, v in pairs.items()))


@settings(max_examples=300, deadline=None)
@given(block)
def test_a_block_mapping_loads_as_ruamel_loads_it(text: str) -> None:
    _assert_read_alike(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab:-[]{}, '\"\n#&*!|>%.01~?")), max_size=40))
def test_any_text_loads_or_is_refused_as_ruamel_does(text: str) -> None:
    _assert_read_alike(text)


def test_scalars_resolve_by_the_yaml_1_2_rules() -> None:
    text = "i: 12\nf: 1.5\nb: true\nnone: null\nd: 2026-01-01\nt: 2026-01-01 10:00:00\ns: text\nh: 0x1F\n"
    value = load_yaml(text, "x")
    assert value == {"i": 12, "f": 1.5, "b": True, "none": None, "d": date(2026, 1, 1), "t": datetime(2026, 1, 1, 10),
                     "s": "text", "h": 31}


def test_several_documents_are_all_read_and_then_refused_as_several() -> None:
    assert _documents("---\na: 1\n---\nb: 2\n") == [{"a": 1}, {"b": 2}]
    with pytest.raises(FormatError, match="expected one YAML document, found 2"):
        load_yaml("---\na: 1\n---\nb: 2\n", "two.yaml")


def test_a_duplicate_key_is_refused_with_its_line() -> None:
    with pytest.raises(FormatError, match=r"dup.yaml: line 2: YAML syntax"):
        load_yaml("a: 1\na: 2\n", "dup.yaml")


def test_a_yaml_directive_is_refused_before_the_loader_could_read_1_1() -> None:
    with pytest.raises(FormatError, match="directives"):
        load_yaml("%YAML 1.1\n---\na: yes\n", "old.yaml")
