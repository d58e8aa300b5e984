"""The evidence graph keeps its meaning (issue 10): a revert withdraws what rests on what it
withdraws and its revert restores all of it; reviews take effect; agents do not review their own
objects."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from click.testing import CliRunner

from tests.support.graph import (
    edit_file,
    entry,
    hypothesis_use,
    land_findings,
    land_link,
    land_review,
    read,
    report_edit,
    state,
)
from tests.support.world import GUIDE_ID, NOTE_ID, NOW, PDF_ID, SLUG, World
from verifier.agentkit.objects import link_file, note_file
from verifier.agentkit.scripted import ScriptedAgent
from verifier.audits.replay import replay
from verifier.cli.app import cli
from verifier.cli.main import COMMAND_MODULES
from verifier.errors import ConflictError
from verifier.formats.finding import parse_finding
from verifier.formats.ledger import LedgerRow
from verifier.pipeline.digest import digest
from verifier.pipeline.ledger import read_chain
from verifier.state.layout import finding_path
from verifier.store.identities import Actor
from verifier.writes.revert import revert

AgentMaker = Callable[[], ScriptedAgent]
assert COMMAND_MODULES  # every command registered on `cli`


@pytest.fixture
def steward_token(world: World) -> str:
    """The demo project's steward (PROJECT.md `steward: ericxtang`), who edits and reverts."""
    return world.home.identities.add("ericxtang", "ericxtang", "human", NOW)


@pytest.fixture
def steward(world: World, steward_token: str) -> Actor:
    return world.home.identities.authenticate(steward_token)


def last_row(world: World) -> LedgerRow:
    return list(read_chain(world.repo.view(world.tip())))[-1][1]


def test_revert_of_an_extract_withdraws_its_links_reviews_and_scores(world: World, second_agent: AgentMaker,
                                                                     steward: Actor) -> None:
    extract, findings = land_findings(world)
    other = second_agent()
    linked, link = land_link(world, "link-1", findings[0], agent=other)
    assert linked.outcome == "accepted", linked.line()
    reviewed, review = land_review(world, "review-1", finding_path(findings[0]), "accept", agent=other)
    assert reviewed.outcome == "accepted", reviewed.line()
    assert hypothesis_use(world) == 1.0
    before = state(world)

    landed = revert(world.home, SLUG, steward, extract.commit or "", reason="Wrong source version.", now=NOW)

    assert read(world, link) is None and read(world, review) is None
    assert read(world, finding_path(findings[0])) is None
    assert hypothesis_use(world) == 0.0
    assert entry(world, findings[0])["present"] is False
    link_id, review_id = link.rsplit("/", 1)[1][:-5], review.rsplit("/", 1)[1][:-5]
    row = last_row(world)
    assert row.action == "revert" and link_id in row.description and review_id in row.description
    assert f"- {link_id}" in world.repo.commit(landed.commit or "").message
    assert replay(world.repo).ok

    revert(world.home, SLUG, steward, landed.commit or "", reason="The version was right.", now=NOW)
    assert state(world) == before  # every file and every score, byte for byte
    assert replay(world.repo).ok


def test_revert_is_refused_while_a_report_cites_what_it_would_withdraw(world: World, steward: Actor,
                                                                       steward_token: str) -> None:
    extract, findings = land_findings(world)
    token = steward_token
    assert world.submit(report_edit(world, token, "r-one", findings[:1])).outcome == "accepted"
    tip = world.tip()
    with pytest.raises(ConflictError, match=f"reports/r-one.md cites {findings[0]}"):
        revert(world.home, SLUG, steward, extract.commit or "", reason="Wrong source.", now=NOW)
    assert world.tip() == tip


def test_a_reject_review_withdraws_use_and_its_revert_restores_it(world: World, second_agent: AgentMaker,
                                                                   steward: Actor) -> None:
    _, findings = land_findings(world)
    linked, link = land_link(world, "link-1", findings[0], agent=second_agent())
    assert linked.outcome == "accepted", linked.line()
    assert hypothesis_use(world) == 1.0 and entry(world, findings[0])["u"] == 1.0
    rejected, review = land_review(world, "review-1", link, "reject")  # agent-a reviews agent-b's link
    assert rejected.outcome == "accepted", rejected.line()
    link_id, review_id = link.rsplit("/", 1)[1][:-5], review.rsplit("/", 1)[1][:-5]
    assert read(world, link) is not None  # the link stays in the tree and in history
    assert entry(world, link_id)["rejected_by"] == [review_id]
    assert hypothesis_use(world) == 0.0 and entry(world, findings[0])["u"] == 0.0
    card = next(c for c in digest(world.home, SLUG, NOW)["hypotheses"] if c["hypothesis_id"] == "H1")
    assert card["links"]["contradicts"] == 0 and card["links_rejected_by_review"] == 1
    undone = revert(world.home, SLUG, steward, rejected.commit or "", reason="The link was sound.", now=NOW)
    assert read(world, review) is None
    assert hypothesis_use(world) == 1.0 and entry(world, findings[0])["u"] == 1.0
    assert "rejected_by" not in entry(world, link_id) and entry(world, link_id)["u"] == 1.0
    assert digest(world.home, SLUG, NOW)["moves"][0]["action"] == "revert"  # reverts are moves
    assert undone.commit and replay(world.repo).ok


def test_an_amend_review_changes_the_object(world: World, second_agent: AgentMaker, steward: Actor) -> None:
    _, findings = land_findings(world)
    path = finding_path(findings[0])
    original = read(world, path)
    assert original is not None
    amended, _ = land_review(world, "review-1", path, "amend", agent=second_agent(),
                             amendment={"limitation": "Eleven self-selected teams, one quarter."})
    assert amended.outcome == "accepted", amended.line()
    now = parse_finding(read(world, path) or b"", path)
    was = parse_finding(original, path)
    assert now.limitation == "Eleven self-selected teams, one quarter."
    assert now.model_copy(update={"limitation": was.limitation}) == was  # nothing else changed
    amended_id = amended.commit or ""
    assert path in world.repo.changed_paths(str(world.repo.commit(amended_id).parents[0].id), amended_id)
    revert(world.home, SLUG, steward, amended.commit or "", reason="The limitation was fine.", now=NOW)
    assert read(world, path) == original
    assert replay(world.repo).ok


def test_an_amend_of_a_link_changes_its_stance(world: World, second_agent: AgentMaker) -> None:
    _, findings = land_findings(world)
    _, link = land_link(world, "link-1", findings[0], agent=second_agent(), stance="contradicts")
    amended, _ = land_review(world, "review-1", link, "amend", amendment={"stance": "context"})
    assert amended.outcome == "accepted", amended.line()
    assert b"stance: context" in (read(world, link) or b"")
    assert replay(world.repo).ok


def test_an_agent_cannot_review_its_own_object(world: World, second_agent: AgentMaker) -> None:
    _, findings = land_findings(world)
    own, _ = land_review(world, "review-1", finding_path(findings[0]), "accept")
    assert [r.code for r in own.rejections] == ["own_object"]
    # Another agent may, and so may a person of the same operator (decision 9): only the agent is barred.
    other, _ = land_review(world, "review-2", finding_path(findings[0]), "accept", agent=second_agent())
    assert other.outcome == "accepted", other.line()


def test_a_link_leaf_on_a_loose_hypothesis_is_refused(world: World) -> None:
    _, findings = land_findings(world)  # H2 of the demo project is loose: no criterion, check date or measure
    world.leaf("link-h2", "link", source_id=None, hypothesis_id="H2", hypothesis_revision=1)
    path, data = link_file(finding_id=findings[0], hypothesis_id="H2", revision=1, stance="contradicts",
                           rationale="The figures point the other way.", leaf_kind="link", leaf_id="link-h2")
    verdict = world.submit(world.creation("link-h2", {path: data}))
    assert verdict.rejections[0].code == "loose_hypothesis", verdict.line()
    assert read(world, path) is None


def test_a_none_found_note_must_list_the_projects_floor_of_sources(world: World) -> None:
    _, findings = land_findings(world)
    world.leaf("skeptic-1", "skeptic", source_id=None, hypothesis_id="H1", hypothesis_revision=1)
    link_path_, link = link_file(finding_id=findings[0], hypothesis_id="H1", revision=1, stance="context",
                                 rationale="Context only.", leaf_kind="skeptic", leaf_id="skeptic-1")
    thin = dict([note_file(leaf_id="skeptic-1", hypothesis_id="H1", revision=1, none_found_after=1,
                           sources_checked=[NOTE_ID])])
    verdict = world.submit(world.creation("skeptic-1", {link_path_: link, **thin}))
    assert [r.code for r in verdict.rejections] == ["counter_evidence_floor"], verdict.line()
    full = dict([note_file(leaf_id="skeptic-1", hypothesis_id="H1", revision=1, none_found_after=3,
                           sources_checked=[NOTE_ID, GUIDE_ID, PDF_ID])])
    assert world.submit(world.creation("skeptic-1", {link_path_: link, **full})).outcome == "accepted"


def test_the_resolver_reverts_on_request_with_its_own_actor_type(world: World, second_agent: AgentMaker) -> None:
    _, findings = land_findings(world)
    linked, link = land_link(world, "link-1", findings[0], agent=second_agent())
    env = {"RW_HOME": str(world.home.root), "RW_NOW": "2026-11-30T12:00:00Z"}
    runner = CliRunner()
    refused = runner.invoke(cli, ["resolver", "revert", SLUG, linked.commit or "", "--reason", "x"], env=env)
    assert refused.exit_code == 2 and "private" in refused.output  # not the Resolver's user: no key to read
    runner.invoke(cli, ["resolver", "keys"], env=env, catch_exceptions=False)
    done = runner.invoke(cli, ["resolver", "revert", SLUG, linked.commit or "", "--reason",
                               "Requested by the steward: misread figure."], env=env, catch_exceptions=False)
    assert done.exit_code == 0, done.output
    assert read(world, link) is None and hypothesis_use(world) == 0.0
    row = last_row(world)
    assert (row.action, row.actor, row.actor_type) == ("revert", "resolver", "resolver")
    assert "Requested by the steward" in row.description
    assert replay(world.repo).ok


def test_rw_revert_says_what_it_withdrew(world: World, second_agent: AgentMaker) -> None:
    extract, findings = land_findings(world)
    _, link = land_link(world, "link-1", findings[0], agent=second_agent())
    token = world.home.identities.add("ericxtang", "ericxtang", "human", NOW)  # the demo project's steward
    env = {"RW_HOME": str(world.home.root), "RW_NOW": "2026-11-30T12:00:00Z", "RW_TOKEN": token}
    done = CliRunner().invoke(cli, ["revert", SLUG, extract.commit or "", "--reason", "Wrong version."], env=env,
                              catch_exceptions=False)
    assert done.exit_code == 0, done.output
    link_id = link.rsplit("/", 1)[1][:-5]
    assert done.output.splitlines()[1] == f"withdrew 1 dependent object: {link_id}"


def test_reverting_a_new_wording_withdraws_the_links_made_against_it(world: World, steward: Actor,
                                                                     steward_token: str) -> None:
    _, findings = land_findings(world)
    token = steward_token
    text = (read(world, "hypotheses/H1.md") or b"").decode()
    reworded = text.replace("more robotics teams pay", "most robotics teams pay").replace("revision: 1", "revision: 2")
    edited = edit_file(world, token, "hypotheses/H1.md", reworded)
    assert edited.outcome == "accepted", edited.line()
    world.leaf("link-2", "link", source_id=None, hypothesis_id="H1", hypothesis_revision=2)
    path, data = link_file(finding_id=findings[0], hypothesis_id="H1", revision=2, stance="contradicts",
                           rationale="Against the new wording.", leaf_kind="link", leaf_id="link-2")
    assert world.submit(world.creation("link-2", {path: data})).outcome == "accepted"
    before = state(world)
    undone = revert(world.home, SLUG, steward, edited.commit or "", reason="Keep the first wording.", now=NOW)
    assert read(world, path) is None  # it was made against revision 2, which is gone
    assert replay(world.repo).ok
    revert(world.home, SLUG, steward, undone.commit or "", reason="The new wording after all.", now=NOW)
    assert state(world) == before
