"""The board follows holds and reverts (issue 10): a held leaf is `accepted` once a person approved
what it held and `rejected` once they rejected it; a reverted leaf is `reverted` (also when its
objects went with what they rested on), and `accepted` again after the revert of the revert."""

from __future__ import annotations

from collections.abc import Callable

from tests.support.graph import hold_links, land_findings, land_link
from tests.support.world import NOW, SLUG, World
from verifier.agentkit.scripted import ScriptedAgent
from verifier.service.config import ServiceConfig
from verifier.service.core import Service
from verifier.state.project import ProjectView
from verifier.writes.holds import decide
from verifier.writes.revert import revert

AgentMaker = Callable[[], ScriptedAgent]


def states(world: World) -> dict[str, str]:
    service = Service(ServiceConfig(home=world.home.root))
    return {leaf["leaf_id"]: leaf["state"] for leaf in service.leaves(SLUG, "all")["leaves"]}


def test_the_board_after_approve_reject_and_revert(world: World, second_agent: AgentMaker) -> None:
    token = world.home.identities.add("ericxtang", "ericxtang", "human", NOW)
    person = world.home.identities.authenticate(token)
    extract, findings = land_findings(world)
    hold_links(world, token)
    other = second_agent()
    for n in (1, 2):
        verdict, _ = land_link(world, f"link-{n}", findings[n], agent=other)
        assert verdict.outcome == "held", verdict.line()
    assert states(world) == {"extract-1": "accepted", "link-1": "held", "link-2": "held"}
    held = {item.leaf_id: item.object_id for item in ProjectView(world.repo.view(world.tip())).held}
    decide(world.home, SLUG, person, held["link-1"], approve=True, reason="Checked.", now=NOW)
    decide(world.home, SLUG, person, held["link-2"], approve=False, reason="Misread.", now=NOW)
    assert states(world) == {"extract-1": "accepted", "link-1": "accepted", "link-2": "rejected"}
    undone = revert(world.home, SLUG, person, extract.commit or "", reason="Wrong version.", now=NOW)
    assert states(world) == {"extract-1": "reverted", "link-1": "reverted", "link-2": "rejected"}
    revert(world.home, SLUG, person, undone.commit or "", reason="Right version.", now=NOW)
    assert states(world) == {"extract-1": "accepted", "link-1": "accepted", "link-2": "rejected"}
