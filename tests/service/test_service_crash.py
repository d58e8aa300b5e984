"""Crash recovery: SIGKILL the whole server at each step of a submission (the test-only hook
RW_TEST_KILL_AT), restart it, and check that the project is consistent (branch, ledger, anchor and
trace store agree, no leftovers), that the acceptance acknowledged before the kill is still there,
and that retrying the interrupted submission with its Idempotency-Key ends in one acceptance."""

from __future__ import annotations

import http.client
import threading
import time
from pathlib import Path

import pytest

from tests.support.service_harness import distinct_findings, live_leaf, start
from tests.support.world import FIXTURES, GUIDE_ID, NOTE_ID, NOW, SLUG, ScriptedAgent, World, make_home
from verifier.audits.audit import verify_ledger
from verifier.client.http import encode_form
from verifier.commons.db import Database
from verifier.pipeline.ledger import ledger_head, read_chain
from verifier.service.journal import Journal
from verifier.service.recovery import orphan_traces
from verifier.store.fetcher import OfflineFetcher
from verifier.store.home import Home
from verifier.writes.project import init_project

pytestmark = pytest.mark.slow  # a real `rw serve` killed at each step

# The landing's durable steps, and the service's own points before and after the pipeline.
STEPS = ["journal", "contribution", "ledger", "branch", "anchor", "respond"]
LANDED = {"anchor", "respond"}  # the branch had moved when the process died


def assert_consistent(home: Home) -> None:
    for slug in home.projects():
        repo = home.project(slug)
        report = verify_ledger(repo, home.read_anchor(slug))
        assert report.ok, report.problems
        tip = repo.tip()
        next_seq, last = ledger_head(repo.view(tip))
        anchor = home.read_anchor(slug)
        assert anchor is not None and (anchor.seq, anchor.row_hash, anchor.commit) == (next_seq - 1, last, tip)
        assert not (repo.path / "refs" / "heads" / "main.lock").exists()
    assert not list((home.root / "traces").glob(".incoming-*"))
    assert orphan_traces(home) == []
    assert Journal(Database(home.layout.commons)).running() == []


@pytest.mark.parametrize("step", STEPS)
def test_kill_at_each_step_then_restart(tmp_path: Path, step: str) -> None:
    home = make_home(tmp_path / "home")
    init_project(home, SLUG, now=NOW, template=FIXTURES / "demo-project")
    token = home.identities.add("agent-a", "op-a", "agent", NOW)
    world = World(home, ScriptedAgent(home, "agent-a", "op-a", token), OfflineFetcher())
    live_leaf(home, "acked-1")
    live_leaf(home, "doomed-1")
    acked_submission = world.creation("acked-1", distinct_findings(world.agent, "acked-1", 0))
    doomed = world.creation("doomed-1", distinct_findings(world.agent, "doomed-1", 3))

    server = start(home.root, env={"RW_TEST_KILL_AT": f"{step}:2"})  # the 2nd time: the 1st is `acked`
    client = server.client(token)
    acked = client.submit(SLUG, "acked-1", acked_submission.bundle, acked_submission.patch, key="acked-key-1")
    assert acked.status == 201 and acked.body["verdict"]["outcome"] == "accepted"
    body, content_type = encode_form(doomed.bundle)
    with pytest.raises((ConnectionError, http.client.HTTPException)):
        client.once("POST", f"/projects/{SLUG}/leaves/doomed-1/submissions", body=body, content_type=content_type,
                    headers={"Idempotency-Key": "doomed-key-1"})
    server.wait_dead()

    server = start(home.root)
    try:
        assert_consistent(home)
        assert world.repo.is_ancestor(acked.body["verdict"]["commit"], world.tip())  # acknowledged: kept
        retried = server.client(token).submit(SLUG, "doomed-1", doomed.bundle, doomed.patch, key="doomed-key-1")
        assert retried.body["verdict"]["outcome"] == "accepted", retried.body
        rows = [row for _, row in read_chain(world.repo.view(world.tip())) if row.leaf_id == "doomed-1"
                and row.action == "submit"]
        expected = ["accepted"] if step in LANDED else ["crash", "accepted"]
        assert [row.outcome for row in rows] == expected
        if step in LANDED:
            assert retried.status == 200  # the attempt that landed, not a second one
        if step == "anchor":
            assert retried.body["verdict"]["notes"]  # rebuilt from its ledger row at start-up
        assert_consistent(home)
    finally:
        server.stop()


def test_kill_during_concurrent_submissions(tmp_path: Path) -> None:
    """kill -9 at whatever moment four agents happen to be at, with two workers."""
    home = make_home(tmp_path / "home")
    init_project(home, SLUG, now=NOW, template=FIXTURES / "demo-project")
    token = home.identities.add("agent-a", "op-a", "agent", NOW)
    world = World(home, ScriptedAgent(home, "agent-a", "op-a", token), OfflineFetcher())
    leaves = [f"load-{n:02d}" for n in range(48)]
    sources = {leaf_id: (NOTE_ID, GUIDE_ID)[n % 2] for n, leaf_id in enumerate(leaves)}
    for leaf_id in leaves:
        live_leaf(home, leaf_id, source_id=sources[leaf_id])
    work = {leaf_id: world.creation(leaf_id, distinct_findings(world.agent, leaf_id, 3 * (n // 2),
                                                               source_id=sources[leaf_id]))
            for n, leaf_id in enumerate(leaves)}
    server = start(home.root, "--workers", "2")
    acked: dict[str, dict[str, object]] = {}

    def agent(mine: list[str]) -> None:
        client = server.client(token)
        for leaf_id in mine:
            body, content_type = encode_form(work[leaf_id].bundle)
            try:
                reply = client.once("POST", f"/projects/{SLUG}/leaves/{leaf_id}/submissions", body=body,
                                    content_type=content_type, headers={"Idempotency-Key": f"key-{leaf_id}"})
            except (OSError, http.client.HTTPException):
                continue  # the server is gone: this one was never acknowledged
            if reply.status == 201:
                acked[leaf_id] = reply.body["verdict"]

    threads = [threading.Thread(target=agent, args=(leaves[n::4],)) for n in range(4)]
    for thread in threads:
        thread.start()
    time.sleep(0.5)
    server.kill()
    for thread in threads:
        thread.join(timeout=60)

    server = start(home.root)
    try:
        assert_consistent(home)
        for verdict in acked.values():
            assert verdict["outcome"] == "accepted" and world.repo.is_ancestor(str(verdict["commit"]), world.tip())
        client = server.client(token)
        for leaf_id in leaves:  # every agent retries what it was not told about, with the same key
            if leaf_id not in acked:
                reply = client.submit(SLUG, leaf_id, work[leaf_id].bundle, work[leaf_id].patch, key=f"key-{leaf_id}")
                assert reply.body["verdict"]["outcome"] == "accepted", reply.body
        rows = [row for _, row in read_chain(world.repo.view(world.tip())) if row.action == "submit"]
        for leaf_id in leaves:
            assert [row.outcome for row in rows if row.leaf_id == leaf_id].count("accepted") == 1
        assert_consistent(home)
    finally:
        server.stop()
