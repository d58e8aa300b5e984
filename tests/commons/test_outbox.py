"""Messages are an outbox (issue 10): a message caused by a command-line landing is in Commons
when the command returns, with no service running, and the service that starts afterwards
delivers it exactly once; messages to an agent reach its operator too."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.service_harness import start
from tests.support.world import NOTE_ID, NOW, SLUG, World
from verifier.cli.app import cli
from verifier.cli.main import COMMAND_MODULES
from verifier.commons.db import Database
from verifier.commons.local import LocalCommons
from verifier.store.home import HomeLayout

pytestmark = pytest.mark.slow  # a real `rw serve` on loopback

assert COMMAND_MODULES  # every command registered on `cli`


def count(home: Path) -> int:
    db = Database(HomeLayout(home).commons)
    try:
        return int(db.read("SELECT COUNT(*) AS n FROM messages")[0]["n"])
    finally:
        db.close()


def kinds(world: World, handle: str) -> list[str]:
    db = Database(world.home.layout.commons)
    try:
        return [m.kind for m in LocalCommons(db, world.home.identities).inbox(handle)]
    finally:
        db.close()


def test_a_cli_landing_is_delivered_without_the_service_and_once_when_it_starts(world: World,
                                                                                 tmp_path: Path) -> None:
    operator_token = world.home.identities.add("op-a", "op-a", "human", NOW)
    steward_token = world.home.identities.add("ericxtang", "ericxtang", "human", NOW)  # PROJECT.md's: adds leaves
    env = {"RW_HOME": str(world.home.root), "RW_NOW": "2026-11-30T12:00:00Z", "RW_FETCH": "offline"}
    runner = CliRunner()
    added = runner.invoke(cli, ["leaf", "add", SLUG, "--kind", "extract", "--id", "extract-1", "--source", NOTE_ID],
                          env={**env, "RW_TOKEN": steward_token}, catch_exceptions=False)
    assert added.exit_code == 0, added.output
    assert count(world.home.root) == 0  # the past (and the leaf) are read silently: no message yet
    submission = world.extract("extract-1")
    (tmp_path / "patch.diff").write_bytes(submission.patch)
    trace = tmp_path / "trace"
    trace.mkdir()
    for name, data in submission.bundle.items():
        (trace / name).write_bytes(data)
    done = runner.invoke(cli, ["submit", SLUG, "--leaf", "extract-1", "--patch", str(tmp_path / "patch.diff"),
                               "--trace", str(trace)], env={**env, "RW_TOKEN": world.agent.token},
                         catch_exceptions=False)
    assert done.exit_code == 0 and done.output.startswith("ACCEPTED"), done.output
    # No service has run: the messages are in Commons already, to the agent and to its operator.
    assert kinds(world, "agent-a") == ["first_minute"]
    assert kinds(world, "op-a") == ["first_minute"]
    local = runner.invoke(cli, ["inbox"], env={**env, "RW_TOKEN": operator_token}, catch_exceptions=False)
    assert local.exit_code == 0 and "[first_minute] [for your agent agent-a] Welcome" in local.output, local.output
    posted = count(world.home.root)
    server = start(world.home.root)
    try:
        inbox = server.client(world.agent.token).get("/messages")
        assert [m["kind"] for m in inbox.body["messages"]] == ["first_minute"]  # exactly once
        mine = server.client(operator_token).get("/messages")
        assert [m["data"]["agent"] for m in mine.body["messages"]] == ["agent-a"]
    finally:
        server.stop()
    assert count(world.home.root) == posted
