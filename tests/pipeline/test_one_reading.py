"""One reading of every input: JSON with duplicate keys, NaN/Infinity, lone surrogates or huge
numbers is refused; YAML anchors, aliases, tags, merge keys and 1.1/1.2-ambiguous scalars are
refused; values are never coerced ('10', 10.0, true are not 10); front matter ends only at a
column-0 `---`, and what another reader would split differently is refused."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from tests.support.hostile import assert_refused_cleanly, traced_submission
from tests.support.world import NOW, SLUG, World
from verifier.agentkit.bundle import TraceRecorder
from verifier.errors import FormatError, Rejected
from verifier.formats.base import validate
from verifier.formats.frontmatter import load_front_matter, load_yaml
from verifier.formats.leaf import LeafInputs
from verifier.formats.project import parse_project
from verifier.formats.strictjson import StrictJSONError, loads
from verifier.formats.trace import TraceEvent, TraceManifest
from verifier.pipeline.trace import inspect_bundle

PATCH = b"diff --git a/x b/x\n"


def _bundle() -> dict[str, bytes]:
    trace = TraceRecorder()
    for index, kind in enumerate(("tool_call", "tool_result", "final")):
        trace.add(NOW + timedelta(seconds=index), kind, f"{kind} {index}")
    return trace.bundle(leaf_id="extract-1", agent="agent-a", operator="op-a", base_revision="a" * 40,
                        patch=PATCH, level="L1")


def _code(files: dict[str, bytes]) -> str:
    with pytest.raises(Rejected) as info:
        inspect_bundle(files, PATCH)
    return info.value.headline.code


# -- JSON ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "why"), [
    (b'{"a": 1, "a": 2}', "duplicate key"),
    (b'{"a": NaN}', "NaN"),
    (b'{"a": -Infinity}', "Infinity"),
    (b'{"a": 1e400}', "finite"),
    (b'{"a": 123456789012345678901234}', "digits"),
    (b'{"a": "\\ud800"}', "surrogate"),
    (b'{"\\udfff": 1}', "surrogate"),
    (b'\xef\xbb\xbf{"a": 1}', "byte-order mark"),
    (b'{"a": "\xff"}', "UTF-8"),
    (b"[" * 200 + b"]" * 200, "nesting"),
])
def test_strict_json_refuses_what_readers_disagree_on(text: bytes, why: str) -> None:
    with pytest.raises(StrictJSONError, match=why):
        loads(text)


def test_strict_json_accepts_ordinary_documents() -> None:
    assert loads(b'{"a": [1, 2.5, -3e2, "\\u00e9\\ud83d\\ude00", null, true]}') == {
        "a": [1, 2.5, -300.0, "\u00e9\U0001f600", None, True]}


def test_manifest_with_a_duplicate_key_is_refused() -> None:
    files = _bundle()
    files["manifest.json"] = files["manifest.json"].rstrip(b"}\n ") + b', "level": "L3"}'
    assert _code(files) == "trace_manifest"


@pytest.mark.parametrize("content", [b"NaN", b'"\\ud800"', b'{"x": 1, "x": 2}'])
def test_event_with_nan_surrogate_or_duplicate_is_refused(content: bytes) -> None:
    files = _bundle()
    files["events.jsonl"] += b'{"ts": "2026-11-30T12:00:09Z", "type": "final", "content": ' + content + b"}\n"
    assert _code(files) == "trace_events"


def test_duplicate_key_manifest_is_refused_cleanly_end_to_end(world: World) -> None:
    world.leaf("hostile-1")
    submission = traced_submission(world, "hostile-1", PATCH)
    manifest = submission.bundle["manifest.json"].rstrip(b"}\n ") + b', "agent": "agent-a"}'
    bundle = {**submission.bundle, "manifest.json": manifest}
    assert_refused_cleanly(world, submission.__class__(SLUG, "hostile-1", submission.patch, bundle, submission.token),
                           "trace_manifest")


# -- no coercion -----------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["10", 10.0, True, "1e1"])
def test_an_integer_field_takes_only_an_integer(value: Any) -> None:
    with pytest.raises(FormatError):
        validate(LeafInputs, {"hypothesis_revision": value}, "leaf.yaml")
    assert validate(LeafInputs, {"hypothesis_revision": 10}, "leaf.yaml").hypothesis_revision == 10


@pytest.mark.parametrize("value", [".inf", ".nan", "-.inf"])
def test_a_budget_is_finite(value: str) -> None:
    text = f"---\nproject: demo-x\nbudget_per_loop: {{usd: {value}}}\n---\n"
    with pytest.raises(FormatError):
        parse_project(text, "PROJECT.md")


def test_a_manifest_number_is_not_a_string() -> None:
    base = {"leaf_id": "extract-1", "agent": "a", "operator": "o", "base_revision": "a" * 40,
            "skill_version": "sk-1", "level": "L1"}
    with pytest.raises(FormatError):
        validate(TraceManifest, {**base, "tokens": "100"}, "manifest.json")
    with pytest.raises(FormatError):
        validate(TraceManifest, {**base, "level": "L1", "tokens": True}, "manifest.json")
    assert validate(TraceManifest, {**base, "tokens": 100, "usd": 1}, "manifest.json").usd == 1.0


def test_timestamps_only_from_their_iso_spelling() -> None:
    base = {"ts": "2026-11-30T12:00:00Z", "type": "final", "content": "x"}
    assert TraceEvent.model_validate(base).ts.year == 2026
    for bad in (1764504000, "30/11/2026", "2026-11-30"):
        with pytest.raises(ValueError):
            TraceEvent.model_validate({**base, "ts": bad})


# -- YAML ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "why"), [
    ("a: &x 1\nb: *x\n", "anchors and aliases"),
    ("a: &x [1]\n", "anchors and aliases"),
    ("a: !!str 5\n", "tags"),
    ("a: !!python/object:os.system x\n", "tags"),
    ("a: !custom 3\n", "tags"),
    ("%YAML 1.1\n---\na: 1\n", "directives"),
    ("a: {<<: {b: 1}}\n", "merge key"),
    ("a: yes\n", "different YAML readers"),
    ("a: off\n", "different YAML readers"),
    ("a: 010\n", "different YAML readers"),
    ("a: 1:30\n", "different YAML readers"),
    ("a: 1e3\n", "different YAML readers"),
])
def test_yaml_read_one_way_only(text: str, why: str) -> None:
    with pytest.raises(FormatError, match=why):
        load_yaml(text, "x.yaml")


def test_yaml_controls_still_read() -> None:
    assert load_yaml("a: 'yes'\nb: 10\nc: 2_000\nd: true\ne: 0\nf: 1.5\ng: \"010\"\n", "x.yaml") == {
        "a": "yes", "b": 10, "c": 2000, "d": True, "e": 0, "f": 1.5, "g": "010"}


# -- front matter ------------------------------------------------------------------------------

def test_indented_fence_inside_a_block_scalar_is_refused_as_a_second_reading() -> None:
    # YAML reads `  ---` as the block scalar's content; a reader that trims lines ends the front
    # matter there and sees no `holds` (issue 21): two readings of one file, refused.
    text = "---\nproject: demo-x\nquestion: |\n  line one\n  ---\n  line two\nholds: [sources]\n---\nbody\n"
    with pytest.raises(FormatError, match=r"line 5: .*trim lines"):
        load_front_matter(text, "PROJECT.md")
    value, _ = load_front_matter(text.replace("  ---\n", "  --- a rule\n"), "PROJECT.md")
    assert isinstance(value, dict)
    assert value["holds"] == ["sources"] and "--- a rule" in value["question"]


@pytest.mark.parametrize(("text", "why"), [
    ("--- \nproject: x\n---\n", "exactly"),
    (" ---\nproject: x\n---\n", "exactly"),
    ("\ufeff---\nproject: x\n---\n", "exactly"),
    ("---\nproject: x\n  ---\n", "not closed"),
    ("---\nproject: x\n---\n---\nholds: [sources]\n---\nbody\n", "second front-matter"),
    ("---\nproject: x\rholds: [sources]\n---\n", "line break"),
    ("---\nproject: x\u2028holds: [sources]\n---\n", "line break"),
])
def test_front_matter_another_reader_would_split_differently_is_refused(text: str, why: str) -> None:
    with pytest.raises(FormatError, match=why):
        load_front_matter(text, "PROJECT.md")
