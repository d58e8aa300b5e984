"""A history that proves itself: what was written outside the verifier is named by id and author,
and the project refuses every write, through every door, until a person repairs it. The bad states
are published by the project simulator (tests/support/simulator.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import Ran, rw_here
from tests.support.service_harness import distinct_findings, live_leaf
from tests.support.simulator import ProjectSimulator
from tests.support.world import NOW, SLUG, World
from verifier.audits.audit import verify_ledger
from verifier.audits.replay import replay
from verifier.errors import HistoryBrokenError
from verifier.pipeline.ledger import read_chain
from verifier.pipeline.writer import ProjectWriter
from verifier.service.config import ServiceConfig
from verifier.service.core import Service
from verifier.service.errors import error_response
from verifier.writes.repair import repair


def rw(home: Path, *args: str, token: str = "") -> Ran:
    """The `rw` door, run in this process through the console script's entry point."""
    return rw_here(*args, env={"RW_HOME": str(home), "RW_TOKEN": token, "RW_NOW": "2026-11-30T12:00:00Z"})


def test_a_fresh_project_replays_and_verifies(world: World) -> None:
    assert replay(world.repo, world.home.read_anchor(SLUG), check_anchor=True).ok
    assert verify_ledger(world.repo, world.home.read_anchor(SLUG)).ok


def test_a_planted_commit_is_named_and_refuses_writes_until_repair(world: World) -> None:
    anchored = world.tip()
    planted = ProjectSimulator(world.home, SLUG).foreign_commit(
        {"findings/zz/fnd_0000000000000000.yaml": b"finding_id: x\n"})
    report = verify_ledger(world.repo, world.home.read_anchor(SLUG))
    assert any(planted in problem and "Stew Ard" in problem for problem in report.problems)
    assert any(planted in d for d in replay(world.repo, world.home.read_anchor(SLUG), check_anchor=True).differences)
    result = rw(world.home.root, "ledger", SLUG, "--verify")
    assert result.returncode == 1 and planted in result.stdout

    with pytest.raises(HistoryBrokenError, match="rw repair"):
        world.leaf("extract-1")
    person = world.home.identities.add("ericxtang", "stew-op", "human", NOW)  # the demo project's steward
    submission_refused = rw(world.home.root, "leaf", "add", SLUG, "--kind", "guide", token=person)
    assert submission_refused.returncode == 7 and "rw repair" in submission_refused.stderr
    assert "Traceback" not in submission_refused.stderr

    fixed = rw(world.home.root, "repair", SLUG, "--to", anchored, "--reason", "a planted commit", token=person)
    assert fixed.returncode == 0, fixed.stderr
    rows = [row for _, row in read_chain(world.repo.view(world.tip()))]
    assert rows[-1].action == "repair" and planted[:12] in rows[-1].description
    assert verify_ledger(world.repo, world.home.read_anchor(SLUG)).ok
    world.leaf("extract-1")  # writes are accepted again


def test_a_ledger_row_edited_in_place_refuses_writes(world: World) -> None:
    anchored = world.tip()
    ProjectSimulator(world.home, SLUG).edit_ledger_row(0, lambda row: row.update(outcome="rejected"))
    assert not verify_ledger(world.repo, world.home.read_anchor(SLUG)).ok
    with pytest.raises(HistoryBrokenError), ProjectWriter.open(world.home, SLUG):
        pass
    person = world.home.identities.add("ericxtang", "stew-op", "human", NOW)  # the demo project's steward
    actor = world.home.identities.authenticate(person)
    repair(world.home, SLUG, actor, anchored, reason="an edited ledger row", now=NOW)
    with ProjectWriter.open(world.home, SLUG) as writer:
        assert writer.tip == world.tip()


def test_repair_refuses_a_target_the_ledger_does_not_vouch_for(world: World) -> None:
    planted = ProjectSimulator(world.home, SLUG).foreign_commit({"notes.md": b"hello\n"})
    person = world.home.identities.add("ericxtang", "stew-op", "human", NOW)  # the demo project's steward
    result = rw(world.home.root, "repair", SLUG, "--to", planted, "--reason", "keep it", token=person)
    assert result.returncode == 2 and "not a ledger commit" in result.stderr
    assert world.repo.tip() == planted


def test_the_service_refuses_a_submission_to_a_broken_project(world: World) -> None:
    live_leaf(world.home, "extract-9")
    submission = world.creation("extract-9", distinct_findings(world.agent, "extract-9", 0))
    ProjectSimulator(world.home, SLUG).foreign_commit({"notes.md": b"hello\n"})
    service = Service(ServiceConfig(home=world.home.root))
    actor = world.home.identities.authenticate(world.agent.token)
    with pytest.raises(HistoryBrokenError) as refused:
        service.submit(actor, world.agent.token, SLUG, "extract-9", submission.bundle, submission.patch, None)
    answer = error_response(refused.value)  # what the route answers
    assert (answer.status_code, json.loads(bytes(answer.body))["error"]["code"]) == (409, "history_broken")
    assert "rw repair" in str(refused.value)
    service.db.close()


def test_a_branch_moved_back_refuses_writes_and_is_named(world: World) -> None:
    world.leaf("extract-1")
    world.leaf("extract-2")
    anchored = world.tip()
    moved = ProjectSimulator(world.home, SLUG).rewind(1)  # the last landing (one ledger commit) is gone
    assert world.tip() == moved != anchored
    report = verify_ledger(world.repo, world.home.read_anchor(SLUG))
    assert any("truncated ledger or branch reset" in problem for problem in report.problems), report.problems
    with pytest.raises(HistoryBrokenError, match="is not the anchor's commit"), ProjectWriter.open(world.home, SLUG):
        pass
    with pytest.raises(HistoryBrokenError):
        world.leaf("extract-3")


def test_a_branch_moved_sideways_refuses_writes_until_repair(world: World) -> None:
    anchored = world.tip()
    simulator = ProjectSimulator(world.home, SLUG)
    sideways = simulator.foreign_commit({"notes.md": b"another line\n"})
    simulator.move_branch(anchored)
    other = simulator.foreign_commit({"notes.md": b"a third line\n"})
    assert world.tip() == other != sideways
    report = verify_ledger(world.repo, world.home.read_anchor(SLUG))
    assert not report.ok
    with pytest.raises(HistoryBrokenError, match=other[:12]), ProjectWriter.open(world.home, SLUG):
        pass
    person = world.home.identities.add("ericxtang", "stew-op", "human", NOW)  # the demo project's steward
    repair(world.home, SLUG, world.home.identities.authenticate(person), anchored, reason="a moved branch", now=NOW)
    assert verify_ledger(world.repo, world.home.read_anchor(SLUG)).ok
    world.leaf("extract-1")
