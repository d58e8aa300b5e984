"""The UI's fixture project: the resolution fixture (three operators' evidence on H1, reviews, a
steward's report, baselines sealed for H1 and H3), plus what the UI must show and must not run:
a person's source whose text holds a `<script>` and a finding quoting it, a link held in the
links queue, a rejected submission; then H1 resolved (its baseline opened, H3's still sealed).
`copied_ui_project` hands a test its own copy of the project built once per test process."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, timedelta
from pathlib import Path

from tests.support.edits import edit
from tests.support.resolution import AFTER_H1, Scenario, build, copied, resolve
from tests.support.templates import built
from tests.support.world import GUIDE_ID, NOTE_ID, NOW, PDF_ID, SLUG, World, make_world
from verifier.agentkit.objects import finding_file, link_file, note_file, source_files
from verifier.pipeline.submit import Submission

HOSTILE = "<script>document.title='pwned';window.pwned=1</script>"
HOSTILE_TEXT = (f"An analyst pasted this into the note: {HOSTILE} and then wrote that verification "
                "layers sold first in every account they had seen that quarter.\n")


@dataclass
class UiProject:
    scenario: Scenario
    hostile_finding: str
    held_link: str
    hostile_source: str

    @property
    def world(self) -> World:
        return self.scenario.world


def _hostile(scenario: Scenario) -> tuple[str, str]:
    world = scenario.world
    files = source_files(url="https://notes.example.org/pasted-script.txt", data=HOSTILE_TEXT.encode(),
                         media_type="text/plain", fetched_by="ericxtang", retrieved_at=NOW - timedelta(days=1),
                         language="en", rights="public", published=date(2026, 6, 1), title=f"Pasted {HOSTILE}",
                         leaf_id=None, status="included")
    source_id = next(path for path in files if path.endswith(".yaml")).rsplit("/", 1)[1][:-5]
    path, data = finding_file(source_id=source_id, source_text=HOSTILE_TEXT, excerpt=HOSTILE,
                              statement=f"The note quotes {HOSTILE} verbatim.",
                              limitation="<b>not bold</b>: a pasted snippet, not a claim.", leaf_id="human-edit")
    files[path] = data
    verdict = world.submit(edit(world, scenario.steward_token, files))
    assert verdict.outcome == "accepted", verdict.line()
    return source_id, path.rsplit("/", 1)[1][:-5]


def _held_link(scenario: Scenario, finding_id: str) -> str:
    world = scenario.world
    project = (world.repo.view(world.tip()).read("PROJECT.md") or b"").decode()
    holds = edit(world, scenario.steward_token, {"PROJECT.md": project.replace("holds: []", "holds: [ links ]")
                                                 .encode()})
    assert world.submit(holds).outcome == "accepted"
    world.leaf("link-held", "link", source_id=None, hypothesis_id="H3", hypothesis_revision=1)
    path, data = link_file(finding_id=finding_id, hypothesis_id="H3", revision=1, stance="context",
                           rationale="Held for a person: does a pasted note say anything on H3?", leaf_kind="link",
                           leaf_id="link-held")
    files = dict([(path, data), note_file(leaf_id="link-held", hypothesis_id="H3", revision=1, none_found_after=3,
                                                   sources_checked=[NOTE_ID, GUIDE_ID, PDF_ID])])
    verdict = world.submit(world.creation("link-held", files))
    assert verdict.outcome == "held", verdict.line()
    return path.rsplit("/", 1)[1][:-5]


def _rejected(world: World) -> None:
    world.leaf("extract-bad")
    submission: Submission = world.extract("extract-bad", "extract-bad-excerpt.yaml")
    assert world.submit(submission).outcome == "rejected"


def ui_project(world: World, *, resolved: bool = True) -> UiProject:
    scenario = build(world)
    source_id, hostile = _hostile(scenario)
    held = _held_link(scenario, hostile)
    _rejected(world)
    if resolved:
        assert resolve(scenario) == ["H1 resolved"]
    return UiProject(scenario, hostile, held, source_id)


def copied_ui_project(dest: Path, *, resolved: bool = True) -> UiProject:
    """`ui_project` on a fresh world, as a home of its own under `dest`/home: the project is built
    once per test process (seconds of submissions, sealing and resolving) and copied for each
    caller (a fraction of a second), so what one test changes no other sees."""
    name = "ui-project" if resolved else "ui-project-unresolved"
    template = built(name, lambda folder: ui_project(make_world(folder), resolved=resolved))
    return replace(template, scenario=copied(template.scenario, dest))


__all__ = ["AFTER_H1", "HOSTILE", "SLUG", "UiProject", "copied_ui_project", "edit", "resolve", "ui_project"]
