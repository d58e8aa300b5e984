"""Every path a person acts by asks the one authority rule (docs/authority.md): the writes of
writes/ and the shells (holds, revert, repair, leaf add, seal, the Planner's wake, verdicts), a
person's edit through `rw submit`, and the CLI. Each refusal is `not_authorised`, leaves the
branch and the ledger as they were, and is kept in the audit log; each allowed row lands."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.support.authority import (
    ADMIN,
    MAINTAINER,
    STEWARD,
    STRANGER,
    People,
    plant_held_sources,
    tip_and_rows,
    with_people,
)
from tests.support.cli import rw_here
from tests.support.edits import edit, report_doc
from tests.support.graph import land_findings, read
from tests.support.world import NOW, SLUG, World
from verifier.errors import ConflictError, NotAuthorised
from verifier.roles.planner import local_commons, wake
from verifier.roles.resolver import set_verdict
from verifier.store.audit import read_denials
from verifier.writes.baseline import BaselineError, seal_missing
from verifier.writes.holds import decide
from verifier.writes.project import LeafRequest, person_leaf
from verifier.writes.revert import revert


@pytest.fixture
def people(world: World) -> People:
    return with_people(world)


def refused(world: World, action: str, who: str) -> None:
    """The last denial of the audit log is this one."""
    last = read_denials(world.home, SLUG)[-1]
    assert (last.kind, last.who, last.action, last.project) == ("authority", who, action, SLUG)


def test_only_the_steward_decides_a_held_object(world: World, people: People) -> None:
    held = plant_held_sources(world.home, SLUG, 2)
    for handle in (MAINTAINER, STRANGER, ADMIN):
        before = tip_and_rows(world)
        with pytest.raises(NotAuthorised, match="needs its steward \\(steward: ericxtang\\)"):
            decide(world.home, SLUG, people.actor(handle), held[0], approve=True, reason="Looks fine.", now=NOW)
        assert tip_and_rows(world) == before
        refused(world, "decide_hold", handle)
    landed = decide(world.home, SLUG, people.actor(STEWARD), held[0], approve=True, reason="Vouched.", now=NOW)
    assert landed.row.actor == STEWARD
    rejected = decide(world.home, SLUG, people.actor(STEWARD), held[1], approve=False, reason="Off topic.", now=NOW)
    assert rejected.row.reason_code == "reject"


def test_the_steward_and_maintainers_revert_and_nobody_else(world: World, people: People) -> None:
    first, _ = land_findings(world, "extract-1")
    for handle in (STRANGER, ADMIN):
        before = tip_and_rows(world)
        with pytest.raises(NotAuthorised, match="needs its steward or maintainers"):
            revert(world.home, SLUG, people.actor(handle), first.commit or "", reason="Wrong.", now=NOW)
        assert tip_and_rows(world) == before
        refused(world, "revert", handle)
    landed = revert(world.home, SLUG, people.actor(MAINTAINER), first.commit or "", reason="Wrong version.", now=NOW)
    assert landed.row.actor == MAINTAINER
    again = revert(world.home, SLUG, people.actor(STEWARD), landed.commit or "", reason="It was right.", now=NOW)
    assert again.row.actor == STEWARD


def test_a_second_revert_of_the_same_commit_names_the_first(world: World, people: People) -> None:
    first, _ = land_findings(world, "extract-1")
    landed = revert(world.home, SLUG, people.actor(MAINTAINER), first.commit or "", reason="Wrong version.", now=NOW)
    before = tip_and_rows(world)
    with pytest.raises(ConflictError, match=f"already reverted by {(landed.commit or '')[:12]}") as twice:
        revert(world.home, SLUG, people.actor(STEWARD), first.commit or "", reason="Wrong.", now=NOW)
    assert twice.value.code == "already_reverted" and tip_and_rows(world) == before


def test_only_the_steward_sets_a_verdict(world: World, people: People) -> None:
    for handle in (MAINTAINER, STRANGER, ADMIN):
        before = tip_and_rows(world)
        with pytest.raises(NotAuthorised, match="set a verdict"):
            set_verdict(world.home, SLUG, people.actor(handle), "H1", "true", confidence=0.9, reason="Obvious.",
                        now=NOW)
        assert tip_and_rows(world) == before
        refused(world, "set_verdict", handle)


def test_a_leaf_by_hand_is_the_stewards_or_a_maintainers(world: World, people: People) -> None:
    request = LeafRequest(kind="scout", gap="pricing data")
    for handle in (STRANGER, ADMIN):
        before = tip_and_rows(world)
        with pytest.raises(NotAuthorised, match="add a leaf"):
            person_leaf(world.home, SLUG, people.actor(handle), request, now=NOW)
        assert tip_and_rows(world) == before
        refused(world, "add_leaf", handle)
    assert person_leaf(world.home, SLUG, people.actor(MAINTAINER), request, now=NOW).created_by == MAINTAINER
    other = LeafRequest(kind="scout", gap="customer counts")
    assert person_leaf(world.home, SLUG, people.actor(STEWARD), other, now=NOW).created_by == STEWARD


def test_seal_and_wake_are_upkeep_a_stranger_may_not_ask_for(world: World, people: People) -> None:
    before = tip_and_rows(world)
    with pytest.raises(NotAuthorised, match="seal baselines"):
        seal_missing(world.home, SLUG, now=NOW, backend=None, person=people.actor(STRANGER))  # type: ignore[arg-type]
    with pytest.raises(NotAuthorised, match="wake the Planner"):
        wake(world.home, SLUG, NOW, commons=local_commons(world.home), force=True, person=people.actor(STRANGER))
    assert tip_and_rows(world) == before
    refused(world, "wake_planner", STRANGER)
    with pytest.raises(BaselineError):  # past the rule: the admin may seal, this home has no key
        seal_missing(world.home, SLUG, now=NOW, backend=None, person=people.actor(ADMIN))  # type: ignore[arg-type]
    woke = wake(world.home, SLUG, NOW + timedelta(hours=1), commons=local_commons(world.home), force=True,
                person=people.actor(MAINTAINER))
    assert woke.skipped is None


def test_a_persons_edit_of_project_md_or_a_hypothesis_is_the_stewards(world: World, people: People) -> None:
    project = (read(world, "PROJECT.md") or b"").decode()
    hypothesis = (read(world, "hypotheses/H1.md") or b"").decode()
    for handle, path, new in ((MAINTAINER, "PROJECT.md", project.replace("holds: [ sources, links ]", "holds: []")),
                              (STRANGER, "PROJECT.md", project.replace("steward: ericxtang", "steward: sam")),
                              (STRANGER, "hypotheses/H1.md", hypothesis + "\nA stranger's note.\n")):
        before = tip_and_rows(world)
        with pytest.raises(NotAuthorised, match=r"edit PROJECT\.md or a hypothesis"):
            world.submit(edit(world, people.token(handle), {path: new.encode()}))
        assert tip_and_rows(world) == before  # no ledger row: a stranger cannot fill the ledger
        refused(world, "edit_project", handle)
    renamed = world.submit(edit(world, people.token(ADMIN), {"PROJECT.md": project.replace(
        "steward: ericxtang", "steward: ericxtang  # confirmed by the admin").encode()}))
    assert renamed.outcome == "accepted", renamed.line()


def test_naming_a_steward_or_maintainer_who_is_not_a_person_yet_is_said(world: World, people: People) -> None:
    project = (read(world, "PROJECT.md") or b"").decode()
    assert "steward: ericxtang" in project
    agent = world.agent.handle  # a handle that exists, but an agent's, holds no person's role
    maintainers = world.submit(edit(world, people.token(STEWARD), {"PROJECT.md": project.replace(
        "maintainers: [", f"maintainers: [nobody-here, {agent}, ", 1).encode()}))
    assert maintainers.outcome == "accepted", maintainers.line()
    said = [note.split(" is ")[0] for note in maintainers.notes]
    assert said == ["maintainer 'nobody-here'", f"maintainer '{agent}'"], maintainers.notes
    assert "not a registered person yet" in maintainers.notes[0] and "an agent's handle" in maintainers.notes[1]
    project = (read(world, "PROJECT.md") or b"").decode()
    handed = world.submit(edit(world, people.token(STEWARD), {"PROJECT.md": project.replace(
        "steward: ericxtang", f"steward: {STRANGER}").encode()}))
    assert handed.outcome == "accepted" and handed.notes == [], handed.line()  # a person: nothing to say


def test_any_person_adds_evidence_by_hand(world: World, people: People) -> None:
    _, findings = land_findings(world)
    verdict = world.submit(edit(world, people.token(STRANGER), {"reports/r-one.md": report_doc("r-one", [],
                                                                                               findings[:1])}))
    assert verdict.outcome == "accepted", verdict.line()


def test_the_cli_refuses_with_exit_10_and_the_role_it_needs(world: World, people: People) -> None:
    held = plant_held_sources(world.home, SLUG, 1)
    env = {"RW_HOME": str(world.home.root), "RW_NOW": "2026-11-30T12:00:00Z", "RW_TOKEN": people.token(STRANGER)}
    before = tip_and_rows(world)
    ran = rw_here("hold", "approve", SLUG, held[0], "--reason", "Fine.", env=env)
    assert ran.returncode == 10 and "sam may not decide a held object" in ran.stderr
    assert "steward: ericxtang" in ran.stderr
    ran = rw_here("verdict", "set", SLUG, "H1", "true", "--confidence", "0.9", "--reason", "Sure.", env=env)
    assert ran.returncode == 10 and "set a verdict" in ran.stderr
    assert tip_and_rows(world) == before
    ran = rw_here("hold", "approve", SLUG, held[0], "--reason", "Vouched.",
                  env={**env, "RW_TOKEN": people.token(STEWARD)})
    assert ran.returncode == 0, ran.stderr


def test_rw_audit_is_the_stewards_and_the_admins_to_read(world: World, people: People) -> None:
    env = {"RW_HOME": str(world.home.root), "RW_NOW": "2026-11-30T12:00:00Z"}
    rw_here("revert", SLUG, world.tip(), "--reason", "No.", env={**env, "RW_TOKEN": people.token(STRANGER)})
    rw_here("hold", "list", SLUG, env={**env, "RW_TOKEN": "rwt_" + "x" * 43})  # a read: no token is asked for
    ran = rw_here("revert", SLUG, world.tip(), "--reason", "No.", env={**env, "RW_TOKEN": "rwt_" + "y" * 43})
    assert ran.returncode == 3
    for reader in (STEWARD, ADMIN):
        shown = rw_here("audit", SLUG, "--json", env={**env, "RW_TOKEN": people.token(reader)})
        assert shown.returncode == 0, shown.stderr
        assert '"who": "sam"' in shown.stdout and '"action": "revert"' in shown.stdout
    denied = rw_here("audit", SLUG, env={**env, "RW_TOKEN": people.token(MAINTAINER)})
    assert denied.returncode == 10 and "read the audit log" in denied.stderr
    owner = rw_here("audit", SLUG, env=env)  # the home's owner at its shell
    assert owner.returncode == 0 and "sam revert" in owner.stdout
    bad = [d for d in read_denials(world.home, SLUG) if d.kind == "authentication"]
    assert [(d.who, d.action, d.door) for d in bad] == [("unknown", "revert", "cli")]
    assert "rwt_" not in (world.home.layout.audit_log.read_text())  # never the token
