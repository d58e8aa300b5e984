"""README / docs/graph-meaning.md: a revert withdraws what rests on what it withdraws, and its
revert restores all of it. Reverting the revert of a link whose finding was withdrawn since by
another revert would bring the link back dangling: it is refused, naming what is missing."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.support.graph import land_findings, land_link, read
from tests.support.world import NOW, SLUG, World
from verifier.agentkit.scripted import ScriptedAgent
from verifier.audits.replay import replay
from verifier.errors import ConflictError
from verifier.state.layout import finding_path
from verifier.store.identities import Actor
from verifier.writes.revert import revert

AgentMaker = Callable[[], ScriptedAgent]


@pytest.fixture
def steward(world: World) -> Actor:
    token = world.home.identities.add("ericxtang", "ericxtang", "human", NOW)
    return world.home.identities.authenticate(token)


def test_reverting_a_revert_never_restores_a_link_whose_finding_is_gone(world: World, second_agent: AgentMaker,
                                                                           steward: Actor) -> None:
    extract, findings = land_findings(world)
    linked, link = land_link(world, "link-1", findings[0], agent=second_agent())
    assert linked.outcome == "accepted", linked.line()
    link_reverted = revert(world.home, SLUG, steward, linked.commit or "", reason="Wrong stance.", now=NOW)
    revert(world.home, SLUG, steward, extract.commit or "", reason="Wrong source version.", now=NOW)
    assert read(world, finding_path(findings[0])) is None

    with pytest.raises(ConflictError, match="no longer in the project"):
        revert(world.home, SLUG, steward, link_reverted.commit or "", reason="The stance was right.", now=NOW)
    assert read(world, link) is None
    assert replay(world.repo).ok
