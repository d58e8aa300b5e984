"""Property and golden tests for the path rule and the write-set firewall."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.patches import new_file
from verifier.checks.writeset import evaluate, glob_match
from verifier.formats.leaf import WriteRule
from verifier.patch.parse import parse_patch
from verifier.patch.paths import path_problem
from verifier.state.layout import default_write_rules

_segment = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,10}", fullmatch=True).filter(
    lambda s: s.lower().strip(".") not in ("git", "gitmodules", "gitattributes", "gitignore")
    and not s.lower().startswith("git~")
)


@given(st.lists(_segment, min_size=1, max_size=6))
def test_plain_paths_are_allowed(segments: list[str]) -> None:
    assert path_problem("/".join(segments)) is None


@given(st.lists(_segment, min_size=0, max_size=3), st.sampled_from(
    ["..", ".", "", ".git", ".GIT", "GIT~1", ".git.", ".gi\u200ct", "a\\b", "a\x00", "-x", " x", "é"]),
    st.lists(_segment, min_size=0, max_size=3))
def test_any_hostile_segment_anywhere_is_refused(before: list[str], bad: str, after: list[str]) -> None:
    assert path_problem("/".join([*before, bad, *after])) is not None


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("findings/*/fnd_*.yaml", "findings/ab/fnd_ab12.yaml", True),
        ("findings/*/fnd_*.yaml", "findings/ab/cd/fnd_ab12.yaml", False),
        ("docs/*.md", "docs/a/b.md", False),
        ("docs/**/*.md", "docs/a/b.md", True),
        ("docs/**/*.md", "docs/b.md", True),
        ("**", "anything/at/all", True),
        ("FIELD-GUIDE.md", "FIELD-GUIDE.md", True),
    ],
)
def test_glob_matches_one_segment_at_a_time(pattern: str, path: str, expected: bool) -> None:
    assert glob_match(pattern, path) is expected


def test_write_set_fails_closed() -> None:
    patch = parse_patch(new_file("findings/ab/fnd_ab00000000000000.yaml", "x\n") + new_file("notes/x.md", "y\n"))
    decisions, rejections = evaluate(patch, default_write_rules("extract"))
    assert [d.rule for d in decisions] == [0, None]
    assert [r.code for r in rejections] == ["outside_write_set"]


def test_verifier_and_human_paths_cannot_be_granted() -> None:
    rules = [WriteRule(op="write", path="**")]
    patch = parse_patch(new_file("ledger/000000.jsonl", "x\n") + new_file("PROJECT.md", "y\n")
                        + new_file("hypotheses/H9.md", "z\n") + new_file("scores/use.json", "{}\n"))
    _, rejections = evaluate(patch, rules)
    assert [r.code for r in rejections] == ["verifier_only", "human_only", "human_only", "verifier_only"]


def test_create_rule_does_not_allow_modify() -> None:
    patch = parse_patch(b"diff --git a/FIELD-GUIDE.md b/FIELD-GUIDE.md\n--- a/FIELD-GUIDE.md\n"
                        b"+++ b/FIELD-GUIDE.md\n@@ -1 +1 @@\n-a\n+b\n")
    _, rejections = evaluate(patch, [WriteRule(op="create", path="FIELD-GUIDE.md")])
    assert rejections and rejections[0].code == "outside_write_set"
