"""The steward's inbox (issue 22, point 6): a held object, a verdict proposal, the Planner's date
question, a leaked token's revocation and a broken history each send the steward one message
saying what to do next (a broken history also each maintainer), and running the catch-up, the
Planner or the history check again sends none twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.edits import edit
from tests.support.hostile import assert_refused_cleanly, traced_submission
from tests.support.hostile_model import hostile_backend
from tests.support.inbox import needs_you
from tests.support.lifecycle import rw
from tests.support.resolution import build, resolve
from tests.support.service_harness import distinct_findings, live_leaf
from tests.support.simulator import ProjectSimulator
from tests.support.ui import ui_project
from tests.support.world import NOW, SLUG, World
from verifier.errors import HistoryBrokenError
from verifier.messages.outbox import deliver
from verifier.messages.steward import Stewards, history_messages, stewards_of
from verifier.roles.planner import local_commons, wake
from verifier.service.config import ServiceConfig
from verifier.service.core import Service

STEWARD = "ericxtang"  # fixtures/demo-project/PROJECT.md


def test_a_held_link_sends_the_steward_one_message_with_the_commands(world: World) -> None:
    deliver(world.home, now=NOW)  # the project is read once, silently
    project = ui_project(world, resolved=False)
    deliver(world.home, now=NOW)
    deliver(world.home, now=NOW)  # a re-run posts nothing twice
    ((body, data),) = needs_you(world.home, STEWARD, "held")
    assert data["kind"] == "link" and data["leaf_id"] == "link-held"
    assert f"rw hold approve|reject {SLUG}" in body and "needs you" in body
    assert project.held_link  # the object is the fixture's held link
    assert needs_you(world.home, "agent-a") == []  # agents keep their return triggers only


def test_a_verdict_proposal_sends_the_steward_one_message(world: World) -> None:
    scenario = build(world)
    text = (scenario.read("PROJECT.md") or b"").decode().replace("holds: []", "holds: [ verdicts ]")
    assert world.submit(edit(world, scenario.steward_token, {"PROJECT.md": text.encode()})).outcome == "accepted"
    deliver(world.home, now=NOW)
    assert resolve(scenario) == ["H1 queued"]
    deliver(world.home, now=NOW)
    assert resolve(scenario) == ["H1 waiting"]
    deliver(world.home, now=NOW)
    ((body, data),) = needs_you(world.home, STEWARD, "verdict")
    assert data["hypothesis_id"] == "H1"
    assert f"rw verdict approve {SLUG} H1" in body and f"rw verdict set {SLUG} H1" in body


def test_the_planners_date_question_reaches_the_stewards_inbox_once(world: World) -> None:
    for _ in range(2):
        woke = rw(world, "planner", "wake", SLUG, "--force", "--json")
        assert woke.exit_code == 0, woke.output
    questions = needs_you(world.home, STEWARD, "date_question")
    assert questions, "the fixture has a hypothesis with no criterion: the Planner asks about it"
    assert len({(d["hypothesis_id"], d["revision"]) for _, d in questions}) == len(questions)  # once each
    body, data = questions[0]
    assert f"hypotheses/{data['hypothesis_id']}.md" in body and "resolution.check_date" in body


def test_a_leaked_token_revocation_tells_the_steward_once(world: World) -> None:
    deliver(world.home, now=NOW)
    victim = world.home.identities.add("agent-b", "op-b", "agent", NOW)
    world.leaf("hostile-1")
    patch = b"diff --git a/findings/ab/x.md b/findings/ab/x.md\nnew file mode 100644\n--- /dev/null\n" \
            b"+++ b/findings/ab/x.md\n@@ -0,0 +1,1 @@\n+hello\n"
    submission = traced_submission(world, "hostile-1", patch, events=[("tool_result", f"export RW_TOKEN={victim}\n")])
    assert_refused_cleanly(world, submission, "secret_in_trace", purged=True)
    deliver(world.home, now=NOW)
    deliver(world.home, now=NOW)
    ((body, data),) = needs_you(world.home, STEWARD, "revoked")
    assert data["revoked"] == ["agent-b"] and "agent-b" in body and victim not in body


def test_a_broken_history_tells_the_steward_once_and_not_whom_a_foreign_commit_names(world: World) -> None:
    deliver(world.home, now=NOW)
    project = (world.repo.view(world.tip()).read("PROJECT.md") or b"").decode()
    ProjectSimulator(world.home, SLUG).foreign_commit(
        {"PROJECT.md": project.replace(f"steward: {STEWARD}", "steward: mallory").encode()})
    for _ in range(2):
        deliver(world.home, now=NOW)
    ((body, _data),) = needs_you(world.home, STEWARD, "history_broken")
    assert "refuses every write" in body and f"rw ledger {SLUG} --verify" in body and f"rw repair {SLUG}" in body
    assert needs_you(world.home, "mallory") == []  # who is told comes from the anchor, not the planted tip


def test_maintainers_are_read_defensively_and_told_of_a_broken_history() -> None:
    text = b"---\nproject: p-1\nsteward: stew\nmaintainers: [ mae, 'Not A Handle', 7, mae, stew ]\n---\nbody\n"
    who = stewards_of(text)
    assert who == Stewards("stew", ("mae", "stew"))
    assert [m.to_agent for m in history_messages("p-1", "its tip moved", who)] == ["stew", "mae"]
    assert stewards_of(b"---\nproject: p-1\nsteward: stew\n---\n") == Stewards("stew", ())
    assert stewards_of(b"not front matter") == Stewards()
    assert stewards_of(b"---\nproject: p-1\nmaintainers: mae\n---\n") == Stewards(None, ())


def test_a_submission_refused_on_a_broken_history_tells_the_steward_while_the_service_runs(world: World) -> None:
    live_leaf(world.home, "extract-9")
    submission = world.creation("extract-9", distinct_findings(world.agent, "extract-9", 0))
    ProjectSimulator(world.home, SLUG).foreign_commit({"notes.md": b"hello\n"})
    service = Service(ServiceConfig(home=world.home.root))
    try:
        actor = world.home.identities.authenticate(world.agent.token)
        for _ in range(2):
            with pytest.raises(HistoryBrokenError):
                service.submit(actor, world.agent.token, SLUG, "extract-9", submission.bundle, submission.patch,
                               None)
    finally:
        service.db.close()
    ((body, _data),) = needs_you(world.home, STEWARD, "history_broken")
    assert f"rw repair {SLUG}" in body


def test_a_token_in_a_model_answer_to_the_planner_is_revoked_and_the_steward_told_once(
        world: World, tmp_path: Path) -> None:
    victim = world.home.identities.add("agent-v", "op-v", "agent", NOW)
    commons = local_commons(world.home)
    answer = {"goal": f"Goal: use {victim}"}
    wake(world.home, SLUG, NOW, commons=commons, force=True, model=hostile_backend(tmp_path / "model", answer))
    deliver(world.home, now=NOW)
    ((body, data),) = needs_you(world.home, STEWARD, "revoked")
    assert data["revoked"] == ["agent-v"] and "the Planner" in body and victim not in body


def test_who_answers_for_a_project_follows_each_edit_of_its_project_file() -> None:
    first = b"---\nproject: p\nsteward: ada\nmaintainers: [bo]\n---\nBody.\n"
    edited = first.replace(b"ada", b"cy")
    assert stewards_of(first) == Stewards("ada", ("bo",))
    assert stewards_of(bytes(first)) is stewards_of(first)  # the same version is read once
    assert stewards_of(edited) == Stewards("cy", ("bo",))
    assert stewards_of(first) == Stewards("ada", ("bo",))
