"""Trace readers (design §3.10): a project's steward lists and reads traces; no agent token can."""

from __future__ import annotations

import json

from click.testing import CliRunner

from tests.support.world import NOW, World
from verifier.cli.app import cli
from verifier.cli.main import COMMAND_MODULES

assert COMMAND_MODULES  # the commands register on import


def rw(world: World, token: str, *args: str) -> tuple[int, str]:
    env = {"RW_HOME": str(world.home.root), "RW_TOKEN": token, "RW_NOW": "2026-11-30T12:00:00Z"}
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    return result.exit_code, result.output


def submitted(world: World) -> tuple[str, str]:
    world.leaf("extract-good")
    world.leaf("extract-bad")
    bad = world.submit(world.extract("extract-bad", "extract-bad-excerpt.yaml"))
    good = world.submit(world.extract("extract-good"))
    assert good.trace_id and bad.trace_id and bad.outcome == "rejected"
    return good.trace_id, bad.trace_id


def test_the_steward_lists_and_reads_traces(world: World) -> None:
    good, bad = submitted(world)
    steward = world.home.identities.add("ericxtang", "ericxtang", "human", NOW)  # PROJECT.md names them
    code, out = rw(world, steward, "trace", "list")
    assert code == 0 and good in out and bad in out and "[excerpt_not_found]" in out
    code, out = rw(world, steward, "trace", "list", "--outcome", "rejected", "--json")
    assert code == 0 and [row["trace_id"] for row in json.loads(out)] == [bad]
    code, out = rw(world, steward, "trace", "show", bad, "--json")
    shown = json.loads(out)
    assert code == 0 and shown["outcomes"][0]["outcome"] == "rejected" and shown["manifest"]["leaf_id"] == "extract-bad"
    code, out = rw(world, steward, "trace", "show", bad, "--file", "events.jsonl")
    assert code == 0 and '"type": "final"' in out
    code, out = rw(world, steward, "trace", "show", "trc_../../identities")
    assert code == 2 and "no trace" in out


def test_no_agent_token_reads_a_trace(world: World) -> None:
    good, _bad = submitted(world)
    for args in (("trace", "list"), ("trace", "show", good)):
        code, out = rw(world, world.agent.token, *args)
        assert code == 3 and "is an agent" in out and good not in out
        code, out = rw(world, "", *args)
        assert code == 3 and good not in out


def test_a_person_who_stewards_nothing_is_refused(world: World) -> None:
    good, _bad = submitted(world)
    person = world.home.identities.add("bob", "bob", "human", NOW)
    code, out = rw(world, person, "trace", "show", good)
    assert code == 3 and "not the steward" in out and good not in out
