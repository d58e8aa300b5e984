"""Paths that differ only by case are one file on a case-insensitive disk: refused within a patch
and against the tree; a verifier-only or person-only path is refused in any case."""

from __future__ import annotations

import pytest

from tests.support.hostile import assert_refused_cleanly, traced_submission
from tests.support.world import NOW, SLUG, World
from verifier.pipeline.submit import Submission


def _create(*files: tuple[str, str]) -> bytes:
    out = []
    for path, text in files:
        lines = text.splitlines(keepends=True)
        out.append(f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
                   f"@@ -0,0 +1,{len(lines)} @@\n" + "".join("+" + line for line in lines))
    return "".join(out).encode()


def _edit(world: World, patch: bytes) -> Submission:
    token = world.home.identities.add("steward", "steward", "human", NOW)
    return Submission(SLUG, None, patch, {}, token)


def test_two_paths_differing_only_by_case_in_one_patch(world: World) -> None:
    patch = _create(("notes/a.md", "one\n"), ("notes/A.md", "two\n"))
    assert_refused_cleanly(world, _edit(world, patch), "case_clash")


def test_a_folder_differing_only_by_case_in_one_patch(world: World) -> None:
    patch = _create(("notes/x.md", "one\n"), ("Notes/y.md", "two\n"))
    assert_refused_cleanly(world, _edit(world, patch), "case_clash")


def test_a_path_differing_only_by_case_from_the_tree(world: World) -> None:
    assert world.repo.view(world.tip()).read("README.md") is not None
    assert_refused_cleanly(world, _edit(world, _create(("readme.md", "shadow\n"))), "case_clash")


@pytest.mark.parametrize("path", ["Ledger/000001.jsonl", "LEAVES/x.yaml", "Scores/use.json", "QUEUE/plans/p.md"])
def test_verifier_paths_in_any_case_are_refused(world: World, path: str) -> None:
    assert_refused_cleanly(world, _edit(world, _create((path, "x\n"))), "verifier_only")


@pytest.mark.parametrize("path", ["Project.md", "HYPOTHESES/H9.md"])
def test_person_only_paths_in_any_case_are_refused_to_agents(world: World, path: str) -> None:
    world.leaf("hostile-1")
    assert_refused_cleanly(world, traced_submission(world, "hostile-1", _create((path, "x\n"))), "human_only")


def test_distinct_names_are_accepted(world: World) -> None:
    verdict = world.submit(_edit(world, _create(("notes/a.md", "one\n"), ("notes/b.md", "two\n"))))
    assert verdict.outcome == "accepted", verdict.line()
