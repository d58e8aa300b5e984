"""A value that looks like a date or a number but cannot be made (a day past its month's end, an
hour of 25, an integer of 5,000 digits, a timestamp past the last moment once in UTC) is a clear
refusal naming the file and line, never a verifier crash: from a finding's YAML, a PROJECT.md and
a trace's events alike."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.support.hostile import assert_refused_cleanly
from tests.support.world import NOW, World
from verifier.agentkit.bundle import TraceRecorder
from verifier.errors import FormatError, Rejected
from verifier.formats.frontmatter import load_yaml
from verifier.formats.project import parse_project
from verifier.pipeline.trace import inspect_bundle


@pytest.mark.parametrize(("text", "line", "why"), [
    ("a: 1\nexcerpt: 2026-02-31\n", 2, "day is out of range"),
    ("a: 1\nb: 2\nquestion: 2026-01-01T25:61:00Z\n", 3, "hour must be in 0..23"),
    ("tokens: 1" + "0" * 5000 + "\n", 1, "digits"),
])
def test_a_value_no_reader_can_make_is_refused_with_its_line(text: str, line: int, why: str) -> None:
    with pytest.raises(FormatError) as info:
        load_yaml(text, "findings/x.yaml")
    assert info.value.where == "findings/x.yaml"
    assert f"line {line}: a value cannot be read" in info.value.message and why in info.value.message


def test_a_project_md_with_an_impossible_date_is_a_format_error() -> None:
    with pytest.raises(FormatError) as info:
        parse_project("---\nproject: demo-x\nmin_date: 2025-13-45\n---\n", "PROJECT.md")
    assert "line 3" in info.value.message and info.value.where == "PROJECT.md"


def test_a_finding_quoting_an_impossible_date_unquoted_is_refused_not_crashed(world: World) -> None:
    world.leaf("extract-1")
    files = world.findings("extract-1")
    path = sorted(files)[0]
    files[path] = files[path].replace(b"excerpt: ", b"excerpt: 2026-02-31\nold_excerpt: ", 1)
    assert_refused_cleanly(world, world.creation("extract-1", files), "bad_format")


def test_a_trace_timestamp_past_the_last_utc_moment_is_a_trace_refusal() -> None:
    trace = TraceRecorder()
    trace.add(NOW, "tool_call", "read")
    trace.add(NOW + timedelta(seconds=1), "tool_result", "text")
    files = trace.bundle(leaf_id="extract-1", agent="agent-a", operator="op-a", base_revision="a" * 40,
                         patch=b"diff --git a/x b/x\n", level="L1")
    files["events.jsonl"] += b'{"ts": "9999-12-31T23:59:59-01:00", "type": "final", "content": "x"}\n'
    with pytest.raises(Rejected) as info:
        inspect_bundle(files, b"diff --git a/x b/x\n")
    assert info.value.headline.code == "trace_events" and "out of range" in info.value.headline.render()
