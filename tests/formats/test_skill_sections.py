"""The skill file's per-kind sections: found, replaced one at a time, versioned by content."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verifier.errors import FormatError
from verifier.formats.skill import SKILL_KINDS, outside_sections_equal, replace_section, sections, skill_version

SKILL = Path(__file__).resolve().parents[2] / "skill" / "SKILL.md"


def test_the_shipped_skill_has_one_section_per_leaf_kind() -> None:
    assert set(sections(SKILL.read_text("utf-8"))) == set(SKILL_KINDS)


@given(st.sampled_from(SKILL_KINDS), st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_replacing_one_section_leaves_everything_else_byte_for_byte(kind: str, body: str) -> None:
    before = SKILL.read_text("utf-8")
    if "<!-- rw-skill:" in body:
        return
    after = replace_section(before, kind, body)
    assert outside_sections_equal(before, after, kind)
    assert sections(after)[kind].body.rstrip("\n") == body.rstrip("\n") or body == ""


def test_a_body_holding_a_marker_is_refused() -> None:
    with pytest.raises(FormatError, match="markers"):
        replace_section(SKILL.read_text("utf-8"), "extract", "<!-- rw-skill:end extract -->\n")


def test_a_missing_or_doubled_section_is_named() -> None:
    text = SKILL.read_text("utf-8")
    with pytest.raises(FormatError, match="guide"):
        sections(text.replace("<!-- rw-skill:begin guide -->\n", "").replace("<!-- rw-skill:end guide -->\n", ""))
    doubled = text + "<!-- rw-skill:begin scout -->\n<!-- rw-skill:end scout -->\n"
    with pytest.raises(FormatError, match="twice"):
        sections(doubled)


def test_the_version_changes_with_any_byte() -> None:
    data = SKILL.read_bytes()
    assert skill_version(data).startswith("sk-")
    assert skill_version(data) != skill_version(data + b" ")
