"""`rw planner wake` on real repositories: one landing per wake, Commons tasks, the activation
gate's one question, the plans hold, and replay agreeing with what the Planner wrote."""

from __future__ import annotations

import json
import shutil
from datetime import timedelta
from pathlib import Path

from click.testing import CliRunner

from tests.support.world import FIXTURES, NOW, SLUG, World
from verifier.audits.replay import replay
from verifier.cli.app import cli
from verifier.cli.main import COMMAND_MODULES
from verifier.commons.local import LocalCommons
from verifier.formats.document import parse_plan
from verifier.formats.leaf import parse_leaf
from verifier.pipeline.ledger import read_chain
from verifier.roles.planner import local_commons, wake
from verifier.state.layout import leaf_path
from verifier.state.project import ProjectView
from verifier.writes.holds import decide
from verifier.writes.project import init_project


def rows(world: World) -> int:
    """Ledger rows, without the "baseline not sealed" rows a wake records (the fixture's active
    hypotheses have no model to seal with: writes.followups)."""
    return sum(1 for _, row in read_chain(world.repo.view(world.tip()))
               if not (row.action == "resolve" and row.kind == "baseline"))


def test_a_wake_lands_its_plan_and_leaves_as_one_landing_and_posts_tasks(world: World) -> None:
    commons = local_commons(world.home)
    before = rows(world)
    result = wake(world.home, SLUG, NOW, commons=commons)
    assert result.landed is not None and result.plan is not None
    assert rows(world) == before + 1  # one ledger row for the plan and all its leaves
    view = world.repo.view(world.tip())
    row = [row for _, row in read_chain(view) if row.action != "resolve"][-1]
    assert (row.action, row.actor_type, row.outcome) == ("plan", "planner", "accepted")
    plan_file, _body = parse_plan(view.read(f"plans/{result.plan.plan_id}.md") or b"", "plan")
    assert plan_file.leaves == [c.leaf_id for c in result.plan.leaves] and plan_file.author == "planner"
    assert plan_file.decisions == result.plan.decisions and any("H2 is not targeted" in d for d in plan_file.decisions)
    ids = [c.leaf_id for c in result.plan.leaves]
    assert ids and all(view.read(leaf_path(i)) is not None for i in ids)
    commit = world.repo.commit(result.landed.tip)
    assert commit.parents[0].author.name == "planner"  # the plan, then the verifier's ledger commit
    for leaf_id in ids:
        thread = commons.thread(SLUG, leaf_id)
        assert [m.kind for m in thread] == ["task"]
        assert parse_leaf(thread[0].body, "task").leaf_id == leaf_id  # the contract is the task body
        assert thread[0].data["expires_at"]
    assert replay(world.repo).ok


def test_waking_again_with_nothing_new_adds_nothing(world: World) -> None:
    commons = local_commons(world.home)
    wake(world.home, SLUG, NOW, commons=commons)
    tip = world.tip()
    early = wake(world.home, SLUG, NOW + timedelta(minutes=5), commons=commons)
    assert early.skipped is not None and "not due" in early.skipped
    later = wake(world.home, SLUG, NOW + timedelta(hours=2), commons=commons)
    assert later.landed is None and later.plan is not None and later.plan.leaves == []
    assert later.plan.refused  # every candidate overlaps an open leaf
    assert world.tip() == tip


def test_loose_hypotheses_get_one_question_and_no_leaf(world: World) -> None:
    commons = local_commons(world.home)
    first = wake(world.home, SLUG, NOW, commons=commons)
    assert first.plan is not None
    assert [q.hypothesis_id for q in first.plan.questions] == ["H2"]  # the demo's H2 has no resolution
    assert all(c.inputs.hypothesis_id != "H2" for c in first.plan.leaves)
    thread = commons.thread(SLUG, first.plan.plan_id)
    assert [m.kind for m in thread] == ["question"] and "H2" in thread[0].body
    second = wake(world.home, SLUG, NOW + timedelta(days=1), commons=commons, force=True)
    assert second.plan is not None and second.plan.questions == []  # once, not every wake


def test_a_held_plan_posts_no_leaves_until_a_person_approves_it(tmp_path: Path, world: World) -> None:
    template = tmp_path / "held-project"
    shutil.copytree(FIXTURES / "demo-project", template)
    project = template / "PROJECT.md"
    project.write_text(project.read_text().replace("project: world-model-eval", "project: held-demo")
                       .replace("holds: []", "holds: [plans]"))
    home = world.home
    init_project(home, "held-demo", now=NOW, template=template)
    commons: LocalCommons = local_commons(home)
    result = wake(home, "held-demo", NOW, commons=commons)
    assert result.plan is not None and result.plan.held and result.landed is not None
    repo = home.project("held-demo")
    view = repo.view(repo.tip())
    assert view.list_dir("leaves") == [] and view.list_dir("plans") == []
    assert [h.type for h in list(ProjectView(view).held)] == ["plan"]
    assert all(commons.thread("held-demo", c.leaf_id) == [] for c in result.plan.leaves)
    again = wake(home, "held-demo", NOW + timedelta(hours=1), commons=commons)
    assert again.landed is None  # the held plan's leaves reserve their sources and hypotheses
    person = home.identities.add("ericxtang", "ericxtang", "human", NOW)  # the steward
    decide(home, "held-demo", home.identities.authenticate(person), result.plan.plan_id, approve=True,
           reason="looks right", now=NOW + timedelta(hours=2))
    released = wake(home, "held-demo", NOW + timedelta(hours=3), commons=commons)
    assert released.plan is not None
    assert sorted(c.leaf_id for c in released.plan.leaves) == sorted(c.leaf_id for c in result.plan.leaves)
    view = repo.view(repo.tip())
    assert all(view.read(leaf_path(c.leaf_id)) is not None for c in result.plan.leaves)
    assert all(commons.thread("held-demo", c.leaf_id) for c in result.plan.leaves)
    assert replay(repo).ok


def test_expired_leaves_free_their_inputs_for_the_next_wake(world: World) -> None:
    commons = local_commons(world.home)
    first = wake(world.home, SLUG, NOW, commons=commons)
    assert first.plan is not None
    sources = sorted(c.inputs.source_id or "" for c in first.plan.leaves if c.kind == "extract")
    later = wake(world.home, SLUG, NOW + timedelta(days=8), commons=commons)  # every leaf expired at 7 days
    assert later.plan is not None and later.landed is not None
    assert sorted(c.inputs.source_id or "" for c in later.plan.leaves if c.kind == "extract") == sources
    assert not {c.leaf_id for c in later.plan.leaves} & {c.leaf_id for c in first.plan.leaves}


def test_rw_planner_wake_prints_the_plan(world: World) -> None:
    assert COMMAND_MODULES  # the commands register on import
    env = {"RW_HOME": str(world.home.root)}
    tip = world.tip()
    result = CliRunner().invoke(cli, ["planner", "wake", SLUG, "--now", "2026-11-30T12:00:00Z", "--json"], env=env)
    assert result.exit_code == 0, result.output
    value = json.loads(result.stdout)  # stderr says the fixture's baselines are not sealed (no model)
    assert value["plan_id"] == f"plan-20261130-120000-{tip[:8]}" and value["leaves"] and value["questions"]
    again = CliRunner().invoke(cli, ["planner", "wake", SLUG, "--now", "2026-11-30T12:05:00Z"], env=env)
    assert again.exit_code == 0 and "not due" in again.output
    missing = CliRunner().invoke(cli, ["planner", "wake", "no-such-project"], env=env)
    assert missing.exit_code == 2
