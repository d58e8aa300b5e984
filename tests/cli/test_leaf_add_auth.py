"""`rw leaf add` is a person's tool: it needs a person's token, and every input must exist at
the base revision (a leaf that can never be done is refused); leaves on loose hypotheses too."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.support.world import NOTE_ID, NOW, SLUG, World
from verifier.cli.app import cli
from verifier.cli.main import COMMAND_MODULES
from verifier.pipeline.ledger import read_chain
from verifier.state.layout import finding_path, leaf_path

assert COMMAND_MODULES  # the commands register on import


def rw(env: dict[str, str], *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture
def env(world: World) -> dict[str, str]:
    person = world.home.identities.add("ericxtang", "ericxtang", "human", NOW)  # the steward
    return {"RW_HOME": str(world.home.root), "RW_TOKEN": person, "RW_NOW": "2026-11-30T12:00:00Z"}


def test_no_token_or_an_agents_token_is_refused(world: World, env: dict[str, str]) -> None:
    tip = world.tip()
    assert rw({**env, "RW_TOKEN": ""}, "leaf", "add", SLUG, "--kind", "extract", "--source", NOTE_ID)[0] == 3
    code, out = rw({**env, "RW_TOKEN": world.agent.token}, "leaf", "add", SLUG, "--kind", "extract",
                   "--source", NOTE_ID)
    assert code == 3 and "only a person" in out
    assert world.tip() == tip


def test_a_person_writes_a_leaf_on_inputs_that_exist(world: World, env: dict[str, str]) -> None:
    code, out = rw(env, "leaf", "add", SLUG, "--kind", "extract", "--source", NOTE_ID)
    assert code == 0, out
    assert world.repo.view(world.tip()).read(leaf_path(out.strip())) is not None
    row = list(read_chain(world.repo.view(world.tip())))[-1][1]
    assert (row.actor, row.actor_type) == ("ericxtang", "human")


@pytest.mark.parametrize(("args", "expected"), [
    (("--kind", "extract", "--source", "src_" + "0" * 16), "there is no source src_0000000000000000"),
    (("--kind", "skeptic", "--hypothesis", "H9", "--revision", "1"), "there is no hypothesis H9"),
    (("--kind", "skeptic", "--hypothesis", "H2", "--revision", "1"), "H2 is loose"),
    (("--kind", "skeptic", "--hypothesis", "H1", "--revision", "7"), "inputs.hypothesis_revision"),
    (("--kind", "link", "--hypothesis", "H1", "--revision", "1", "--finding", "fnd_" + "1" * 16),
     "there is no finding fnd_1111111111111111"),
    (("--kind", "review", "--object", finding_path("fnd_" + "2" * 16)), "there is no finding at"),
    (("--kind", "review", "--object", "PROJECT.md"), "not the path of a finding or a link"),
])
def test_inputs_missing_at_the_base_are_refused_by_name(world: World, env: dict[str, str], args: tuple[str, ...],
                                                         expected: str) -> None:
    tip = world.tip()
    code, out = rw(env, "leaf", "add", SLUG, *args)
    assert code == 2 and expected in out, out
    assert world.tip() == tip
