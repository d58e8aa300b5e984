"""The verdict is a pure function: `judge` over a tree held in memory, a history that answers
ancestry from a table, and `now` — no git, no disk, no clock."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

import pytest

from verifier.errors import NotFound
from verifier.patch.parse import parse_patch
from verifier.pipeline.submit import Attempt, Refused, Tip, judge
from verifier.pipeline.verdict import Submission
from verifier.state.layout import PROJECT_FILE
from verifier.state.view import DictTree, TreeView
from verifier.store.identities import Actor

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "demo-project"
NOW = datetime(2026, 12, 1, tzinfo=UTC)
PERSON = Actor("alice", "alice", "human")
AGENT = Actor("bot", "alice", "agent")


def _demo_files() -> dict[str, bytes]:
    return {str(path.relative_to(DEMO)): path.read_bytes() for path in DEMO.rglob("*") if path.is_file()}


class CountingTree(DictTree):
    """A tree in memory that counts the reads of each path."""

    def __init__(self, files: Mapping[str, bytes]) -> None:
        super().__init__(files)
        self.reads: dict[str, int] = {}

    def read(self, path: str) -> bytes | None:
        self.reads[path] = self.reads.get(path, 0) + 1
        return super().read(path)


class TableHistory:
    """Two commits, c0 then c1 (the tip); each revision's tree given in memory."""

    def __init__(self, trees: Mapping[str, TreeView]) -> None:
        self.trees = trees

    def has_object(self, oid: str) -> bool:
        return oid in self.trees

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        order = ["c0", "c1"]
        return ancestor in order and descendant in order and order.index(ancestor) <= order.index(descendant)

    def view(self, rev: str | None) -> TreeView:
        return self.trees[rev or "c1"]

    def resolve(self, rev: str) -> str:
        if rev not in self.trees:
            raise NotFound(f"no commit {rev!r}")
        return rev


def _readme_patch(old: str, new: str) -> bytes:
    return (f"diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n"
            f"-{old}\n+{new}\n").encode()


def _tip(files: dict[str, bytes], before: dict[str, bytes] | None = None) -> tuple[Tip, CountingTree]:
    view = CountingTree(files)
    return Tip("c1", view, TableHistory({"c0": DictTree(before or files), "c1": view})), view


def _first_line(files: dict[str, bytes]) -> str:
    return files["README.md"].decode().splitlines()[0]


def _text_of(_blob: str, data: bytes, _media_type: str) -> str:
    return data.decode()


def test_a_person_s_edit_is_judged_without_git_and_parses_project_md_once() -> None:
    files = _demo_files()
    tip, view = _tip(files)
    patch = _readme_patch(_first_line(files), "# Edited")
    attempt = Attempt(PERSON, Submission("demo", None, patch, {}, "token"))
    judged = judge(tip, attempt, parse_patch(patch), {}, _text_of, NOW)
    assert (judged.outcome, judged.base, judged.leaf, judged.holds) == ("accepted", "c1", None, ())
    assert judged.writes["README.md"] == files["README.md"].replace(_first_line(files).encode(), b"# Edited", 1)
    assert view.reads[PROJECT_FILE] == 1
    assert files == _demo_files()  # the tree it was handed is untouched


def test_an_agent_outside_any_leaf_is_refused_knowing_neither_leaf_nor_base() -> None:
    files = _demo_files()
    tip, _ = _tip(files)
    patch = _readme_patch(_first_line(files), "# Edited")
    with pytest.raises(Refused) as refused:
        judge(tip, Attempt(AGENT, Submission("demo", None, patch, {}, "token")), parse_patch(patch), {}, _text_of,
              NOW)
    assert (refused.value.headline.code, refused.value.leaf, refused.value.base) == ("leaf_required", None, None)


def test_an_unknown_leaf_is_refused_before_anything_else_is_read() -> None:
    files = _demo_files()
    tip, view = _tip(files)
    patch = _readme_patch(_first_line(files), "# Edited")
    with pytest.raises(Refused) as refused:
        judge(tip, Attempt(AGENT, Submission("demo", "lf_nowhere", patch, {}, "token")), parse_patch(patch), {},
              _text_of, NOW)
    assert refused.value.headline.code == "unknown_leaf"
    assert refused.value.leaf is None
    assert PROJECT_FILE not in view.reads


def test_an_edit_of_a_file_changed_since_its_base_is_stale_and_names_the_base() -> None:
    files = _demo_files()
    before = {**files, "README.md": b"# Older\n" + files["README.md"].split(b"\n", 1)[1]}
    tip, _ = _tip(files, before)
    patch = _readme_patch("# Older", "# Edited")
    attempt = Attempt(PERSON, Submission("demo", None, patch, {}, "token", base="c0"))
    with pytest.raises(Refused) as refused:
        judge(tip, attempt, parse_patch(patch), {}, _text_of, NOW)
    assert (refused.value.headline.code, refused.value.base) == ("stale", "c0")


def test_a_base_that_names_no_commit_is_refused_as_wrong_base() -> None:
    files = _demo_files()
    tip, _ = _tip(files)
    patch = _readme_patch(_first_line(files), "# Edited")
    attempt = Attempt(PERSON, Submission("demo", None, patch, {}, "token", base="nowhere"))
    with pytest.raises(Refused) as refused:
        judge(tip, attempt, parse_patch(patch), {}, _text_of, NOW)
    assert refused.value.headline.code == "wrong_base"
