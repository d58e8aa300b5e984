"""A steward steers a project from their own machine (issue 22's end to end): on a second home
with only the service's URL and an invite code, they join, approve a held link, set a verdict and
revert a commit with a reason, all over HTTP through `rw`. A person who is not the steward tries
each of those and is refused with `not_authorised`, changing nothing, and every refusal is in the
audit log the steward reads. A revoked or an expired token then gets 401 everywhere: the API, the
git endpoint and the UI session it had opened."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from tests.support import service_harness
from tests.support.elsewhere import elsewhere_env, get_status, rw
from tests.support.graph import edit_file, read
from tests.support.people import get_json, signed_in
from tests.support.ui import UiProject, copied_ui_project
from tests.support.world import NOW, SLUG, World
from verifier.pipeline.ledger import read_chain
from verifier.state.project import ProjectView
from verifier.store.identities import Grant

pytestmark = pytest.mark.slow  # a real `rw serve`, real `rw` processes on a second "machine"

STEWARD = "sam"  # the steward the project hands over to, who has never been on the verifier's host
EXIT_NOT_AUTHORISED = 10


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[UiProject, service_harness.Server]]:
    project = copied_ui_project(tmp_path)
    world = project.world
    old = (read(world, "PROJECT.md") or b"").decode()
    handed = edit_file(world, project.scenario.steward_token, "PROJECT.md",
                       old.replace("steward: ericxtang\n", f"steward: {STEWARD}\n"))
    assert handed.outcome == "accepted", handed.line()
    server = service_harness.start(world.home.root)
    try:
        yield project, server
    finally:
        server.stop()


def invite(world: World, operator: str) -> str:
    """An invite made by the home's admin at its own shell (no server: RW_HOME)."""
    made = rw("invite", SLUG, "--operator", operator, "--agents", "1", "--expires", "7d",
              env={**elsewhere_env(world.home.root.parent / f"admin-{operator}"), "RW_HOME": str(world.home.root)})
    assert made.returncode == 0, made.stderr
    return made.stdout.strip()


def joined(world: World, server: service_harness.Server, operator: str, machine: Path) -> dict[str, str]:
    """The environment of `operator`'s own machine after `rw join`: no RW_HOME, no RW_SERVER, no RW_TOKEN."""
    env = elsewhere_env(machine)
    done = rw("join", server.url, invite(world, operator), env=env)
    assert done.returncode == 0, done.stderr
    return env


def state(world: World) -> tuple[str, int, list[str]]:
    tip = world.tip()
    view = world.repo.view(tip)
    return tip, len(list(read_chain(view))), [item.object_id for item in ProjectView(view).held]


def test_a_steward_joins_from_afar_and_acts_and_a_stranger_is_refused_and_audited(
        served: tuple[UiProject, service_harness.Server], tmp_path: Path) -> None:
    project, server = served
    world = project.world
    stranger = joined(world, server, "mallory", tmp_path / "mallory")
    target = next(row.commit for _, row in reversed(list(read_chain(world.repo.view(world.tip()))))
                  if row.outcome == "accepted" and row.action == "submit" and row.commit)
    attempts = {
        "hold approve": ("hold", "approve", SLUG, project.held_link, "--reason", "Looks fine to me."),
        "verdict set": ("verdict", "set", SLUG, "H1", "false", "--confidence", "0.6", "--reason", "I say so."),
        "revert": ("revert", SLUG, target, "--reason", "I do not like it."),
    }
    before = state(world)
    for what, args in attempts.items():
        refused = rw(*args, env=stranger)
        assert refused.returncode == EXIT_NOT_AUTHORISED, (what, refused.stdout, refused.stderr)
        assert "not_authorised" in refused.stderr and STEWARD in refused.stderr, (what, refused.stderr)
    assert state(world) == before  # nothing landed, nothing queued or dequeued

    steward = joined(world, server, STEWARD, tmp_path / STEWARD)
    listed = rw("hold", "list", SLUG, env=steward)
    assert listed.returncode == 0 and project.held_link in listed.stdout, listed.stderr
    approved = rw("hold", "approve", SLUG, project.held_link, "--reason", "A pasted note is context for H3.",
                  env=steward)
    assert approved.returncode == 0, approved.stderr
    verdict = rw("verdict", "set", SLUG, "H1", "false", "--confidence", "0.6", "--reason", "The survey was withdrawn.",
                 env=steward)
    assert verdict.returncode == 0, verdict.stderr
    reverted = rw("revert", SLUG, target, "--reason", "Planted by mistake.", env=steward)
    assert reverted.returncode == 0, reverted.stderr
    rows = [row for _, row in read_chain(world.repo.view(world.tip()))][before[1]:]
    mine = [(row.action, row.outcome) for row in rows if row.actor == STEWARD]
    assert mine == [("hold", "accepted"), ("resolve", "accepted"), ("revert", "accepted")], mine
    assert project.held_link not in state(world)[2]

    audit = rw("audit", SLUG, "--json", env=steward)
    assert audit.returncode == 0, audit.stderr
    refused_by = [denial for denial in json.loads(audit.stdout) if denial["who"] == "mallory"]
    assert len(refused_by) == len(attempts) and {denial["kind"] for denial in refused_by} == {"authority"}
    assert "rwt_" not in audit.stdout
    not_theirs = rw("audit", SLUG, env=stranger)
    assert not_theirs.returncode == EXIT_NOT_AUTHORISED, not_theirs.stderr


def test_the_steward_reads_the_projects_traces_over_http_and_nobody_else_does(
        served: tuple[UiProject, service_harness.Server]) -> None:
    project, server = served
    home = project.world.home
    steward = home.identities.add(STEWARD, STEWARD, "human", NOW)
    stranger = home.identities.add("rex", "rex", "human", NOW)
    listed = server.client(steward).get(f"/projects/{SLUG}/traces", {"limit": "5"})
    assert listed.status == 200 and listed.body["traces"], listed.body
    first = listed.body["traces"][0]
    shown = server.client(steward).get(f"/projects/{SLUG}/traces/{first['trace_id']}")
    assert shown.status == 200 and "manifest.json" in shown.body["files"], shown.body
    assert [o["project"] for o in shown.body["outcomes"]] == [SLUG] * len(shown.body["outcomes"])
    for where in (f"/projects/{SLUG}/traces", f"/projects/{SLUG}/traces/{first['trace_id']}"):
        refused = server.client(stranger).get(where)
        assert (refused.status, refused.error_code) == (403, "not_authorised"), refused.body


def test_a_revoked_or_expired_token_gets_401_on_the_api_the_git_endpoint_and_its_ui_session(
        served: tuple[UiProject, service_harness.Server]) -> None:
    project, server = served
    home = project.world.home
    live = home.identities.add("rita", "rita", "human", NOW)
    soon = home.identities.add("otto", "otto", "human", NOW - timedelta(days=30), Grant(expires_in=timedelta(days=1)))
    sid, _csrf = signed_in(server.url, live)
    assert get_json(server.url + "/needs-you.json", cookie=sid)[0] == 200
    revoked = server.client(live).post_json("/tokens/rita/revoke", {"reason": "laptop lost"})
    assert revoked.status == 200, revoked.body
    for token in (live, soon):
        assert server.client(token).get("/whoami").status == 401
        status, _text = get_status(server.port, f"/projects/{SLUG}.git/info/refs?service=git-receive-pack", token)
        assert status == 401
    assert get_json(server.url + "/needs-you.json", cookie=sid)[0] == 401  # the session ended with its token
