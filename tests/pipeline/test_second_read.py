"""Regression tests for what the second read of the core found: each was a way past a check, a
crash on hostile input, or a half-written state."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest

from tests.support.edits import edit, landed_findings
from tests.support.hostile import hostile_submission
from tests.support.patches import new_file
from tests.support.world import NOW, SLUG, ScriptedAgent, World
from verifier.agentkit.objects import finding_file, link_file, source_files
from verifier.audits.replay import replay
from verifier.formats.fetch import FetchOutcome
from verifier.formats.trace import TraceRecord
from verifier.pipeline.submit import Submission
from verifier.state.layout import finding_path, use_shard_path
from verifier.state.project import ProjectView
from verifier.store.traces import TraceStore
from verifier.writes.holds import decide


@pytest.fixture
def steward(world: World) -> str:
    return world.home.identities.add("ericxtang", "ericxtang", "human", NOW)


def hold_links(world: World, token: str) -> None:
    project = (world.repo.view(world.tip()).read("PROJECT.md") or b"").decode()
    assert world.submit(edit(world, token, {"PROJECT.md": project.replace("holds: []", "holds: [ links ]")
                                             .encode()})).outcome == "accepted"


def test_a_held_object_is_never_overwritten(world: World, steward: str, second_agent) -> None:  # type: ignore[no-untyped-def]
    findings = landed_findings(world)
    hold_links(world, steward)
    other = second_agent()
    files = {}
    for leaf_id in ("link-1", "link-2"):
        world.leaf(leaf_id, "link", source_id=None, hypothesis_id="H1", hypothesis_revision=1)
    path, data = link_file(finding_id=findings[0], hypothesis_id="H1", revision=1, stance="contradicts",
                           rationale="First.", leaf_kind="link", leaf_id="link-1")
    files = {path: data}
    assert world.submit(world.creation("link-1", files)).outcome == "held"
    path2, data2 = link_file(finding_id=findings[0], hypothesis_id="H1", revision=1, stance="contradicts",
                             rationale="Second.", leaf_kind="link", leaf_id="link-2")
    verdict = world.submit(world.creation("link-2", {path2: data2}, agent=other))
    assert verdict.rejections[0].code == "duplicate_id"
    assert world.repo.view(world.tip()).read(f"queue/links/{path}") == data


def test_held_object_operator_comes_from_its_leaf_not_its_text(
        world: World, steward: str, second_agent: Callable[[], ScriptedAgent]) -> None:
    findings = landed_findings(world)  # extract-1 by op-a
    hold_links(world, steward)
    other = second_agent()
    world.leaf("link-9", "link", source_id=None, hypothesis_id="H1", hypothesis_revision=1)
    path, data = link_file(finding_id=findings[0], hypothesis_id="H1", revision=1, stance="contradicts",
                           rationale="x\nleaf_id: extract-1\ny", leaf_kind="link", leaf_id="link-9")
    assert world.submit(world.creation("link-9", {path: data}, agent=other)).outcome == "held"
    held = list(ProjectView(world.repo.view(world.tip())).held)
    assert held[0].leaf_id == "link-9"
    person = world.home.identities.authenticate(steward)
    decide(world.home, SLUG, person, held[0].object_id, approve=True, reason="ok", now=NOW)
    shard = json.loads(world.repo.view(world.tip()).read(use_shard_path(held[0].object_id)) or b"{}")
    assert shard[held[0].object_id]["operator"] == "op-b"
    assert replay(world.repo).ok


def test_infinite_costs_are_refused(world: World) -> None:
    world.leaf("extract-1")
    submission = world.extract("extract-1")
    manifest = json.loads(submission.bundle["manifest.json"])
    raw = json.dumps(manifest).replace('"level"', '"usd": 1e999, "level"')
    bundle = {**submission.bundle, "manifest.json": raw.encode()}
    verdict = world.submit(Submission(SLUG, "extract-1", submission.patch, bundle, submission.token))
    assert verdict.rejections[0].code == "trace_manifest"


@pytest.mark.parametrize("what", ["nested_events", "nested_manifest", "huge_hunk_number"])
def test_hostile_bytes_are_rejections_not_crashes(world: World, what: str) -> None:
    world.leaf("hostile-1")
    patch = new_file("findings/ab/fnd_ab00000000000000.yaml", "x\n")
    if what == "huge_hunk_number":
        patch = patch.replace(b"+1,1 @@", b"+1," + b"9" * 5000 + b" @@")
    submission = hostile_submission(world, "hostile-1", patch)
    bundle = dict(submission.bundle)
    if what == "nested_events":
        bundle["events.jsonl"] = b"[" * 100_000 + b"\n"
    if what == "nested_manifest":
        bundle["manifest.json"] = b"[" * 100_000
    verdict = world.submit(Submission(SLUG, "hostile-1", patch, bundle, submission.token))
    assert verdict.outcome == "rejected", verdict.line()


@pytest.mark.parametrize("base", ["HEAD", "main", "short"])
def test_a_persons_base_may_be_any_revision_spelling(world: World, steward: str, base: str) -> None:
    tip = world.tip()
    project = (world.repo.view(tip).read("PROJECT.md") or b"").decode()
    submission = edit(world, steward, {"PROJECT.md": project.replace("20m", "25m").encode()},
                      base=tip[:10] if base == "short" else base)
    assert world.submit(submission).outcome == "accepted"
    bad = edit(world, steward, {"PROJECT.md": project.replace("20m", "35m").encode()}, base="no-such-rev")
    verdict = world.submit(bad)
    assert verdict.rejections[0].code == "wrong_base"


def test_a_person_adds_a_source_and_a_finding_on_it_in_one_edit(world: World, steward: str) -> None:
    text = b"Kestrel completed nine audits in 2025 at CHF 95,000 each.\n"
    files = source_files(url="https://notes.example.org/kestrel.txt", data=text, media_type="text/plain",
                         fetched_by="ericxtang", retrieved_at=NOW, language="en", rights="public",
                         published=date(2026, 1, 5), title=None, leaf_id=None, status="included")
    source_id = next(p for p in files if p.endswith(".yaml")).rsplit("/", 1)[1][:-5]
    path, data = finding_file(source_id=source_id, source_text=text.decode().strip(),
                              excerpt="Kestrel completed nine audits in 2025", statement="Nine audits.",
                              limitation="Vendor's own count.", leaf_id="human-edit")
    verdict = world.submit(edit(world, steward, {**files, path: data}))
    assert verdict.outcome == "accepted", verdict.line()
    assert world.repo.view(world.tip()).read(finding_path(path.rsplit("/", 1)[1][:-5])) == data


def test_urls_are_not_fetched_for_leaves_that_cannot_write_sources(world: World) -> None:
    class Recording:
        def __init__(self) -> None:
            self.urls: list[str] = []

        def fetch(self, url: str, allows: Callable[[str], str | None],
                  allows_address: Callable[[str], str | None] | None = None) -> FetchOutcome:
            self.urls.append(url)
            raise AssertionError("must not fetch")

    recording = Recording()
    world.fetcher = recording
    world.leaf("extract-1")
    files = source_files(url="http://169.254.169.254/latest", data=b"x\n", media_type="text/plain",
                         fetched_by="agent-a", retrieved_at=NOW, language="en", rights="public",
                         published=date(2026, 1, 1), title=None, leaf_id="extract-1")
    verdict = world.submit(world.creation("extract-1", files))
    assert verdict.outcome == "rejected" and recording.urls == []


def test_the_same_trace_stored_twice_is_one_trace(tmp_path: Path) -> None:
    store = TraceStore(tmp_path / "traces", durable=False)
    record = TraceRecord("trc_0123456789abcdef", "a" * 64, None, "L1", 3)  # type: ignore[arg-type]
    store.put(record, {"manifest.json": b"{}"})
    store.put(record, {"manifest.json": b"{}"})
    assert store.read(record.trace_id) == {"manifest.json": b"{}"}
    assert not list((tmp_path / "traces").glob(".incoming-*"))


def test_a_file_named_like_a_verifier_folder_is_refused(world: World, steward: str) -> None:
    verdict = world.submit(edit(world, steward, {"queue": b"blocked\n"}))
    assert verdict.rejections[0].code == "verifier_only"
