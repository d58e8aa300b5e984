"""The push gate asks the authority rule (docs/authority.md) as `rw submit` and `rw revert` do: a
person who is not the steward cannot change PROJECT.md's `holds:` or a hypothesis by pushing to
refs/for/main, nor revert unless a maintainer; the refusal is `[not_authorised]` on the pusher's
terminal, lands nothing (no ledger row, the branch unmoved) and is in the audit log."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.authority import MAINTAINER, STEWARD, STRANGER, tip_and_rows, with_people
from tests.support.git import clone, commit_file, git, push_for_review
from tests.support.graph import land_findings
from tests.support.world import SLUG, World
from verifier.store.audit import read_denials

pytestmark = pytest.mark.slow  # real git pushes through the hooks


def test_a_strangers_push_of_holds_is_refused_and_the_stewards_lands(world: World, tmp_path: Path) -> None:
    people = with_people(world)
    work = clone(world.repo.path, tmp_path / "work")
    text = (work / "PROJECT.md").read_text()
    commit_file(work, "PROJECT.md", text.replace("holds: [ sources, links ]", "holds: []"), "PROJECT.md: no holds")
    before = tip_and_rows(world)
    result = push_for_review(work, people.token(STRANGER))
    assert result.returncode != 0
    assert "[not_authorised] sam may not edit PROJECT.md or a hypothesis" in result.stderr
    assert "needs its steward or admins (steward: ericxtang; admin: ada)" in result.stderr
    assert tip_and_rows(world) == before
    last = read_denials(world.home, SLUG)[-1]
    assert (last.who, last.action, last.door) == (STRANGER, "edit_project", "git")
    result = push_for_review(work, people.token(STEWARD))
    assert result.returncode == 0, result.stderr
    assert b"holds: []" in (world.repo.view(world.tip()).read("PROJECT.md") or b"")


def test_a_pushed_revert_is_a_maintainers_not_a_strangers(world: World, tmp_path: Path) -> None:
    people = with_people(world)
    landed, _ = land_findings(world)
    work = clone(world.repo.path, tmp_path / "work")
    git(work, "revert", "--no-edit", landed.commit or "")
    message = git(work, "log", "-1", "--format=%B").stdout.strip()
    git(work, "commit", "-q", "--amend", "-m", f"{message}\n\nReason: Misread the figure.")
    before = tip_and_rows(world)
    result = push_for_review(work, people.token(STRANGER))
    assert result.returncode != 0 and "[not_authorised]" in result.stderr
    assert tip_and_rows(world) == before
    assert read_denials(world.home, SLUG)[-1].action == "revert"
    result = push_for_review(work, people.token(MAINTAINER))
    assert result.returncode == 0, result.stderr


def _hand_over_then_edit(work: Path, order: tuple[str, str]) -> None:
    """Two PROJECT.md commits in `order`: "hand over" names mia the steward, "edit" empties holds."""
    for step in order:
        text = (work / "PROJECT.md").read_text()
        if step == "hand over":
            commit_file(work, "PROJECT.md", text.replace("steward: ericxtang\n", f"steward: {MAINTAINER}\n"),
                        "PROJECT.md: mia is the steward now")
        else:
            commit_file(work, "PROJECT.md", text.replace("holds: [ sources, links ]", "holds: []"),
                        "PROJECT.md: no holds")


def test_a_pushed_commit_is_held_to_project_md_as_the_commits_before_it_left_it(world: World,
                                                                                 tmp_path: Path) -> None:
    # PROJECT.md is parsed once per content for a push, never once for the whole push: after the
    # first commit hands the project over, the old steward's second edit of PROJECT.md is refused.
    people = with_people(world)
    work = clone(world.repo.path, tmp_path / "work")
    _hand_over_then_edit(work, ("hand over", "edit"))
    before = tip_and_rows(world)
    result = push_for_review(work, people.token(STEWARD))
    assert result.returncode != 0
    assert "[not_authorised] ericxtang may not edit PROJECT.md or a hypothesis" in result.stderr
    assert "(steward: mia; admin: ada)" in result.stderr
    assert tip_and_rows(world) == before
    assert b"steward: ericxtang\n" in (world.repo.view(world.tip()).read("PROJECT.md") or b"")


def test_the_same_two_edits_land_when_the_hand_over_comes_last(world: World, tmp_path: Path) -> None:
    people = with_people(world)
    work = clone(world.repo.path, tmp_path / "work")
    _hand_over_then_edit(work, ("edit", "hand over"))
    result = push_for_review(work, people.token(STEWARD))
    assert result.returncode == 0, result.stderr
    landed = world.repo.view(world.tip()).read("PROJECT.md") or b""
    assert b"steward: mia\n" in landed and b"holds: []" in landed


def test_a_push_shows_the_checks_notes_beside_its_verdict(world: World, tmp_path: Path) -> None:
    people = with_people(world)
    work = clone(world.repo.path, tmp_path / "work")
    text = (work / "PROJECT.md").read_text()
    commit_file(work, "PROJECT.md", text.replace("steward: ericxtang\n", "steward: zoe-invited\n"), "hand over to zoe")
    result = push_for_review(work, people.token(STEWARD))
    assert result.returncode == 0, result.stderr
    assert "remote:   note: steward 'zoe-invited' is not a registered person yet" in result.stderr, result.stderr
