"""While the service is down: the CLI keeps retrying with backoff and gets its verdict when the
service is back, and a leaf whose expiry fell inside the outage is extended by the outage window."""

from __future__ import annotations

import os
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.support.service_harness import RW, distinct_findings, free_port, live_leaf, start
from tests.support.world import FIXTURES, NOW, SLUG, ScriptedAgent, World, make_home
from verifier.pipeline.ledger import read_chain
from verifier.store.fetcher import OfflineFetcher
from verifier.writes.project import init_project

pytestmark = pytest.mark.slow  # a real `rw serve` on loopback


def make_world(tmp_path: Path) -> World:
    home = make_home(tmp_path / "home")
    init_project(home, SLUG, now=NOW, template=FIXTURES / "demo-project")
    token = home.identities.add("agent-a", "op-a", "agent", NOW)
    return World(home, ScriptedAgent(home, "agent-a", "op-a", token), OfflineFetcher())


def test_the_cli_retries_until_the_service_is_back(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    live_leaf(world.home, "wait-1")
    submission = world.creation("wait-1", distinct_findings(world.agent, "wait-1", 0))
    (tmp_path / "patch.diff").write_bytes(submission.patch)
    (tmp_path / "trace").mkdir()
    for name, data in submission.bundle.items():
        (tmp_path / "trace" / name).write_bytes(data)
    port = free_port()
    env = {**os.environ, "RW_TOKEN": world.agent.token}
    err_path = tmp_path / "stderr.txt"
    with err_path.open("w") as err_file:
        cli = subprocess.Popen([RW, "submit", SLUG, "--leaf", "wait-1", "--patch", str(tmp_path / "patch.diff"),
                                "--trace", str(tmp_path / "trace"), "--server", f"http://127.0.0.1:{port}",
                                "--retry-for", "60s"], env=env, stdout=subprocess.PIPE, stderr=err_file, text=True)
    try:
        # Nothing listens yet: wait until the CLI says it is retrying (on a loaded machine its start-up
        # alone can take seconds), then bring the service up.
        deadline = time.monotonic() + 30
        while "retrying" not in err_path.read_text() and time.monotonic() < deadline:
            assert cli.poll() is None, err_path.read_text()
            time.sleep(0.1)
        assert cli.poll() is None
        server = start(world.home.root, port=port)
        try:
            out, _ = cli.communicate(timeout=60)
        finally:
            server.stop()
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()
    err = err_path.read_text()
    assert cli.returncode == 0 and out.startswith("ACCEPTED"), out + err
    assert "service unavailable" in err and "retrying" in err


def test_a_leaf_that_expired_during_an_outage_is_extended(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    server = start(world.home.root, "--outage-min", "1")
    leaf = live_leaf(world.home, "outage-1", expires_in=timedelta(seconds=5))
    submission = world.creation("outage-1", distinct_findings(world.agent, "outage-1", 0))
    server.stop()  # a clean stop records when the service went away
    time.sleep(max(0.0, (leaf.expires_at - datetime.now(UTC)).total_seconds()) + 1.5)
    assert datetime.now(UTC) > leaf.expires_at  # by its contract the leaf has expired
    server = start(world.home.root, "--outage-min", "1", port=server.port)
    try:
        reply = server.client(world.agent.token).submit(SLUG, "outage-1", submission.bundle, submission.patch)
        assert reply.status == 201 and reply.body["verdict"]["outcome"] == "accepted", reply.body
        extension = next(row for _, row in read_chain(world.repo.view(world.tip()))
                         if row.action == "leaf" and row.actor == "verifier" and "outage" in row.description)
        assert "outage-1" in extension.description
    finally:
        server.stop()
