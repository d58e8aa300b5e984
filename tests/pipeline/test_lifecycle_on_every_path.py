"""Issue 23, points 1, 2 and 4: one lifecycle rule on every path (a plan that targets a ready loose
hypothesis activates it; every activation seals its baseline or records why not), triggers read
from rows whoever wrote them (plan rows offer new leaves, a revert tells the author why, the
first-minute message carries the digest, `rw scores` counts a reverted leaf as reverted), and
leaves disjoint by construction (`rw leaf add` refuses a held key; a review of an agent's own
object is never offered to it nor claimable by it). Real git pushes, the real CLI, a real
`rw serve` on loopback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.graph import land_findings
from tests.support.lifecycle import (
    baseline_rows,
    digest_json,
    hypothesis_text,
    loosen,
    person,
    push_activation,
    rows,
    rw,
)
from tests.support.resolution import configure
from tests.support.service_harness import live_leaf, start
from tests.support.world import FIXTURES, NOTE_ID, NOW, SLUG, ScriptedAgent, World
from verifier.agentkit.objects import link_file
from verifier.checks.hypotheses import loose_problem
from verifier.cli.app import cli
from verifier.commons.db import Database
from verifier.commons.local import LocalCommons
from verifier.formats.leaf import parse_leaf
from verifier.messages.outbox import deliver
from verifier.pipeline.ledger import read_chain
from verifier.roles.planner import local_commons, wake
from verifier.seal.status import NOT_SEALED
from verifier.state.layout import leaf_path, seal_path
from verifier.store.home import COMMONS_FILE
from verifier.writes.followups import NO_MODEL
from verifier.writes.project import init_project

# Real `rw` processes, a real service or real git pushes: end to end, so in the slow set.
pytestmark = pytest.mark.slow

# --- point 1: the lifecycle and the seal ------------------------------------------------------------


def test_a_push_that_activates_a_hypothesis_seals_its_baseline(world: World, tmp_path: Path) -> None:
    token = person(world)
    loosen(world, token)
    configure(world.home)  # the recorded model and the Resolver's key pair
    said = push_activation(world, tmp_path, token)
    assert "sealed baseline for H1, H3" in said, said
    view = world.repo.view(world.tip())
    assert "status: active" in hypothesis_text(world, "H3")
    assert view.read(seal_path("H3")) is not None and view.read(seal_path("H1")) is not None
    assert [code for _, code, _ in baseline_rows(world)] == ["baseline_sealed", "baseline_sealed"]
    assert digest_json(world)["unsealed"] == []


def test_an_activation_without_a_model_records_why_once_and_rw_seal_seals_it_later(world: World,
                                                                                    tmp_path: Path) -> None:
    token = person(world)
    loosen(world, token)
    said = push_activation(world, tmp_path, token)
    assert "note: baseline not sealed for H1, H3" in said, said
    recorded = baseline_rows(world)
    assert recorded == [("rejected", NOT_SEALED, f"not sealed: H1: {NO_MODEL}"),
                        ("rejected", NOT_SEALED, f"not sealed: H3: {NO_MODEL}")]
    unsealed = digest_json(world)["unsealed"]
    assert unsealed == [{"hypothesis_id": h, "missing": "no baseline was sealed yet", "why": NO_MODEL}
                        for h in ("H1", "H3")]
    evaluated = rw(world, "eval", SLUG, "--json")
    assert evaluated.exit_code == 0, evaluated.output
    project = json.loads(evaluated.stdout)["projects"][SLUG]["project"]
    assert project["unsealed_baselines"] == 2 and project["unsealed"][1] == {"hypothesis_id": "H3", "why": NO_MODEL}
    # The next path that still cannot seal adds nothing to the record; `rw seal` says what and why.
    before = len(rows(world))
    refused = rw(world, "seal", SLUG)
    assert refused.exit_code == 2 and "no model is configured" in refused.output
    assert f"H3: not sealed (no baseline was sealed yet): {NO_MODEL}" in refused.output
    assert len(rows(world)) == before
    configure(world.home)
    sealed = rw(world, "seal", SLUG)
    assert sealed.exit_code == 0 and sealed.stdout == "sealed H1\nsealed H3\n", sealed.output
    assert digest_json(world)["unsealed"] == []


def test_a_loose_hypothesis_says_truly_why_it_takes_no_leaf(world: World) -> None:
    loosen(world, person(world))
    view = world.repo.view(world.tip())
    with_criterion = loose_problem(view, "H3")
    assert with_criterion is not None and with_criterion.code == "loose_hypothesis"
    assert "has a criterion, check date (2028-03-31) and measure" in with_criterion.message
    assert "no resolution criterion" not in with_criterion.message
    without = loose_problem(view, "H2")
    assert without is not None and "has no resolution criterion" in without.message


def test_the_planner_activates_a_loose_hypothesis_it_targets_and_its_leaves_are_accepted(world: World) -> None:
    _verdict, findings = land_findings(world)
    loosen(world, person(world))
    woke = rw(world, "planner", "wake", SLUG, "--force", "--json")
    assert woke.exit_code == 0, woke.output
    plan = json.loads(woke.stdout)
    assert plan["activated"] == ["H3"]
    assert "status: active" in hypothesis_text(world, "H3")
    row = rows(world)[plan["seq"]]
    assert row.action == "plan" and "activated H3" in row.description
    # Activated in the plan's own landing: the commit that wrote the plan also activated H3.
    contribution = world.repo.commit(row.commit or "")
    changed = world.repo.changed_paths(str(contribution.parents[0].id), str(contribution.id))
    assert "hypotheses/H3.md" in changed and any(path.startswith("plans/") for path in changed)
    # No model here: the wake recorded why H3's baseline is not sealed.
    assert ("rejected", NOT_SEALED, f"not sealed: H3: {NO_MODEL}") in baseline_rows(world)
    view = world.repo.view(world.tip())
    leaves = [parse_leaf(view.read(leaf_path(leaf["leaf_id"])) or b"", "leaf") for leaf in plan["leaves"]]
    (link,) = [leaf for leaf in leaves if leaf.kind == "link" and leaf.inputs.hypothesis_id == "H3"]
    files = dict(link_file(finding_id=finding_id, hypothesis_id="H3", revision=1,
                           stance="contradicts" if number == 0 else "context",
                           rationale="The finding bears on conditioning versus verification revenue.",
                           leaf_kind="link", leaf_id=link.leaf_id)
                 for number, finding_id in enumerate(link.inputs.finding_ids))
    assert set(link.inputs.finding_ids) <= set(findings)
    verdict = world.submit(world.creation(link.leaf_id, files, base=world.tip()))
    assert verdict.outcome == "accepted", verdict.line()


# --- point 2: triggers from rows --------------------------------------------------------------------


def _inbox(world: World, agent: str) -> list[tuple[str, str, dict[str, object]]]:
    db = Database(world.home.root / COMMONS_FILE)
    try:
        return [(m.kind, m.body, m.data) for m in LocalCommons(db, world.home.identities).inbox(agent)]
    finally:
        db.close()


def test_a_revert_tells_the_author_why_and_rw_scores_counts_it_reverted(world: World) -> None:
    deliver(world.home, now=NOW)  # the project is read once, silently
    verdict, _findings = land_findings(world)
    deliver(world.home, now=NOW)
    ((kind, body, data),) = _inbox(world, "agent-a")
    assert kind == "first_minute" and "findings from" in body and "The whole digest is in this message's data" in body
    assert data["digest"]["corpus"] == digest_json(world)["corpus"]  # type: ignore[index]
    token = person(world)
    reverted = rw(world, "revert", SLUG, verdict.commit or "", "--reason", "the figures are from a retracted draft",
                  token=token)
    assert reverted.exit_code == 0, reverted.output
    told = [(body, data) for kind, body, data in _inbox(world, "agent-a") if kind == "reverted"]
    assert told == [("leaf extract-1 reverted by ericxtang: the figures are from a retracted draft",
                     {"leaf_id": "extract-1", "commit": verdict.commit, "by": "ericxtang",
                      "reason": "the figures are from a retracted draft", "seq": rows(world)[-1].seq})]
    assert [kind for kind, _, _ in _inbox(world, "op-a")].count("reverted") == 1  # the operator's copy
    scores = rw(world, "scores", SLUG, "--json")
    operator = json.loads(scores.stdout)["operators"]["op-a"]
    assert (operator["accepted_leaves"], operator["reverted_leaves"]) == (0, 1)


def test_the_planners_new_leaves_reach_the_agent_best_at_their_kind(world: World) -> None:
    deliver(world.home, now=NOW)
    land_findings(world)
    deliver(world.home, now=NOW)
    woke = rw(world, "planner", "wake", SLUG, "--force", "--json")
    assert woke.exit_code == 0, woke.output
    planned = {leaf["leaf_id"]: leaf["kind"] for leaf in json.loads(woke.stdout)["leaves"]}
    offers = [data for kind, _, data in _inbox(world, "agent-a") if kind == "new_leaf"]
    assert len(offers) == 1 and planned[str(offers[0]["leaf_id"])] == "extract"
    offered = offers[0].get("leaf_ids", [offers[0]["leaf_id"]])
    assert isinstance(offered, list) and all(planned[str(leaf_id)] == "extract" for leaf_id in offered)


# --- point 4: disjoint by construction ---------------------------------------------------------------


def test_rw_leaf_add_refuses_a_key_an_open_leaf_holds(world: World) -> None:
    token = person(world)
    _verdict, findings = land_findings(world)
    finding = next(path for path in world.findings("extract-1"))
    world.leaf("review-planner", "review", source_id=None, object_path=finding)
    before, tip = len(rows(world)), world.tip()
    second = rw(world, "leaf", "add", SLUG, "--kind", "review", "--object", finding, "--id", "review-second",
                token=token)
    assert second.exit_code != 0 and "key_held" in second.output and "review-planner" in second.output
    assert (len(rows(world)), world.tip()) == (before, tip)
    assert world.repo.view(tip).read(leaf_path("review-second")) is None
    extract = rw(world, "leaf", "add", SLUG, "--kind", "extract", "--source", NOTE_ID, "--id", "extract-open",
                 token=token)
    assert extract.exit_code == 0, extract.output
    again = rw(world, "leaf", "add", SLUG, "--kind", "extract", "--source", NOTE_ID, "--id", "extract-again",
               token=token)
    assert again.exit_code != 0 and "key_held" in again.output and "extract-open" in again.output
    assert findings


def test_a_review_of_an_agents_own_finding_is_never_offered_to_it(
        world: World, second_agent: Callable[[], ScriptedAgent]) -> None:
    land_findings(world)
    other = second_agent()
    finding = next(path for path in world.findings("extract-1"))
    live_leaf(world.home, "review-own", kind="review", source_id=None, object_path=finding)
    server = start(world.home.root)
    try:
        board = "/projects/" + SLUG + "/leaves"
        mine = server.client(world.agent.token).get(board, {"state": "open"}).body["leaves"]
        theirs = server.client(other.token).get(board, {"state": "open"}).body["leaves"]
        anyone = server.client().get(board, {"state": "open"}, auth=False).body["leaves"]
        assert "review-own" not in [leaf["leaf_id"] for leaf in mine]
        assert "review-own" in [leaf["leaf_id"] for leaf in theirs]
        assert "review-own" in [leaf["leaf_id"] for leaf in anyone]
        claim = f"/projects/{SLUG}/leaves/review-own/claim"
        refused = server.client(world.agent.token).post_json(claim, {})
        assert (refused.status, refused.error_code) == (409, "own_object"), refused.body
        assert server.client(other.token).get(board, {"state": "claimed"}).body["leaves"] == []  # unchanged
        taken = server.client(other.token).post_json(claim, {})
        assert taken.status in (200, 201), taken.body
    finally:
        server.stop()


def test_approving_a_held_plan_activates_its_loose_targets_and_seals_them(world: World, tmp_path: Path) -> None:
    template = tmp_path / "held-project"
    shutil.copytree(FIXTURES / "demo-project", template)
    project = template / "PROJECT.md"
    project.write_text(project.read_text().replace("project: world-model-eval", "project: held-demo")
                       .replace("holds: []", "holds: [plans]"))
    h3 = template / "hypotheses" / "H3.md"
    h3.write_text(h3.read_text().replace("status: active", "status: loose"))
    home = world.home
    init_project(home, "held-demo", now=NOW, template=template)
    result = wake(home, "held-demo", NOW, commons=local_commons(home))
    assert result.plan is not None and result.plan.held and "H3" in result.plan.activates
    repo = home.project("held-demo")
    assert b"status: loose" in (repo.view(repo.tip()).read("hypotheses/H3.md") or b"")  # held: not yet
    configure(home)
    token = person(world)
    approved = CliRunner().invoke(cli, ["hold", "approve", "held-demo", result.plan.plan_id, "--reason", "go"],
                                  env={"RW_HOME": str(home.root), "RW_NOW": "2026-11-30T13:00:00Z",
                                       "RW_TOKEN": token})
    assert approved.exit_code == 0, approved.output
    assert "sealed baseline for H1, H3" in approved.stderr
    view = repo.view(repo.tip())
    assert b"status: active" in (view.read("hypotheses/H3.md") or b"") and view.read(seal_path("H3")) is not None
    approval = next(row for _, row in read_chain(view) if row.action == "hold")
    commit = repo.commit(approval.commit or "")
    assert "hypotheses/H3.md" in repo.changed_paths(str(commit.parents[0].id), str(commit.id))


def test_a_push_over_the_services_git_endpoint_seals_what_it_activates(world: World, tmp_path: Path) -> None:
    token = person(world)
    loosen(world, token)
    configure(world.home)
    server = start(world.home.root)
    try:
        env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"}
        auth = ["-c", f"http.extraHeader=Authorization: Bearer {token}"]

        def git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(["git", *auth, *args], cwd=cwd, env=env, capture_output=True, text=True,
                                  check=False, timeout=120)

        assert git(tmp_path, "clone", "-q", f"{server.url}/projects/{SLUG}.git", "work").returncode == 0
        work = tmp_path / "work"
        path = work / "hypotheses" / "H3.md"
        path.write_text(path.read_text().replace("status: loose", "status: active"))
        assert git(work, "-c", "user.name=S", "-c", "user.email=s@example.org", "commit", "-qam",
                   "H3: activate").returncode == 0
        pushed = git(work, "push", "origin", "HEAD:refs/for/main")
        assert pushed.returncode == 0, pushed.stderr
        assert "sealed baseline for H1, H3" in pushed.stderr
    finally:
        server.stop()
    assert world.repo.view(world.tip()).read(seal_path("H3")) is not None
