"""`rw leaf show` and `rw leaf list` say what the board says (issue 23 point 7): one function,
`verifier.ui.board.leaf_state`, reads every leaf's state, so a held leaf a person approved is
`accepted` everywhere and a reverted one `reverted` (it used to say `held` and `accepted`)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable

import pytest

from tests.support.agent import RW
from tests.support.graph import hold_links, land_findings, land_link
from tests.support.world import NOW, SLUG, World
from verifier.agentkit.scripted import ScriptedAgent
from verifier.formats.base import iso
from verifier.service.config import ServiceConfig
from verifier.service.core import Service
from verifier.state.project import ProjectView
from verifier.writes.holds import decide
from verifier.writes.revert import revert

# Real `rw` processes, a real service or real git pushes: end to end, so in the slow set.
pytestmark = pytest.mark.slow

AgentMaker = Callable[[], ScriptedAgent]


def board_states(world: World) -> dict[str, str]:
    service = Service(ServiceConfig(home=world.home.root))
    return {leaf["leaf_id"]: leaf["state"] for leaf in service.leaves(SLUG, "all")["leaves"]}


def rw(world: World, *args: str) -> str:
    env = {key: value for key, value in os.environ.items() if not key.startswith("RW_")}
    env.update({"RW_HOME": str(world.home.root), "RW_NOW": iso(NOW)})
    done = subprocess.run([RW, *args], env=env, capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def cli_states(world: World) -> tuple[dict[str, str], dict[str, str]]:
    listed = {row["leaf_id"]: row["state"] for row in json.loads(rw(world, "leaf", "list", SLUG, "--json"))}
    shown = {leaf_id: json.loads(rw(world, "leaf", "show", SLUG, leaf_id, "--json"))["state"] for leaf_id in listed}
    return listed, shown


def test_leaf_show_and_list_say_what_the_board_says_after_approve_and_revert(world: World,
                                                                             second_agent: AgentMaker) -> None:
    token = world.home.identities.add("ericxtang", "ericxtang", "human", NOW)
    person = world.home.identities.authenticate(token)
    extract, findings = land_findings(world)
    hold_links(world, token)
    verdict, _ = land_link(world, "link-1", findings[1], agent=second_agent())
    assert verdict.outcome == "held", verdict.line()
    held = {item.leaf_id: item.object_id for item in ProjectView(world.repo.view(world.tip())).held}
    decide(world.home, SLUG, person, held["link-1"], approve=True, reason="Checked.", now=NOW)
    expected = {"extract-1": "accepted", "link-1": "accepted"}
    assert board_states(world) == expected
    assert cli_states(world) == (expected, expected)  # not `held`: the hold was approved
    revert(world.home, SLUG, person, extract.commit or "", reason="Wrong version.", now=NOW)
    expected = {"extract-1": "reverted", "link-1": "reverted"}
    assert board_states(world) == expected
    assert cli_states(world) == (expected, expected)  # not `accepted`: its objects are gone
