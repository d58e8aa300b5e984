"""The "needs you" page's view-model (verifier.ui.needs): per project, the held objects with their
files, the verdict proposals, the hypotheses awaiting a date, what a person may set a verdict on
and revert (never a contribution already reverted), and a project refusing writes with why."""

from __future__ import annotations

from pathlib import Path

from tests.support.ui import AFTER_H1, copied_ui_project
from tests.support.world import SLUG
from verifier.ui.needs import ProjectNeeds, needs_you_page
from verifier.ui.site import open_reader
from verifier.writes.revert import revert


def test_the_page_lists_what_waits_in_each_project_and_the_stewards_first(tmp_path: Path) -> None:
    project = copied_ui_project(tmp_path)
    world = project.world
    reader = open_reader(world.repo, SLUG, AFTER_H1)
    page = needs_you_page([ProjectNeeds("a-broken-one", None, "its tip moved"), ProjectNeeds(SLUG, reader)],
                          "ericxtang", "csrf-token")
    first, second = page["projects"]
    assert first["slug"] == SLUG and first["yours"] and second["broken"] == "its tip moved"
    (held,) = first["held"]
    assert held["object_id"] == project.held_link and held["files"] and held["type"] == "link"
    assert [d["hypothesis_id"] for d in first["awaiting_date"]] == ["H2"]
    assert "H1" not in [h["hypothesis_id"] for h in first["open_hypotheses"]]  # resolved already
    assert page["csrf"] == "csrf-token" and page["total"] == first["count"] + second["count"]


def test_a_reverted_contribution_is_not_offered_again(tmp_path: Path) -> None:
    project = copied_ui_project(tmp_path)
    world = project.world
    reader = open_reader(world.repo, SLUG, AFTER_H1)
    (first,) = needs_you_page([ProjectNeeds(SLUG, reader)], "ericxtang", "x")["projects"]
    newest = first["revertable"][0]["commit"]
    revert(world.home, SLUG, project.scenario.steward, newest, reason="Planted by mistake.", now=AFTER_H1)
    (after,) = needs_you_page([ProjectNeeds(SLUG, open_reader(world.repo, SLUG, AFTER_H1))], "ericxtang",
                              "x")["projects"]
    assert newest not in [r["commit"] for r in after["revertable"]]
