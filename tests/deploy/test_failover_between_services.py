"""Failover between two real `rw serve` instances on one PostgreSQL Commons, one S3 trace store
(moto) and one git host (git daemon): the lease holder is killed (-9) in the middle of a run of
submissions; the client retries each submission, with its one Idempotency-Key, against both
instances; the survivor takes the project over once the lease runs out, and every acknowledged
acceptance is on the git host exactly once."""

from __future__ import annotations

import subprocess
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.support.instances import deployment
from tests.support.service_harness import Server, start
from tests.support.world import SLUG
from verifier.client.http import Client, Reply
from verifier.errors import Unreachable
from verifier.pipeline.ledger import read_chain
from verifier.pipeline.verdict import Submission
from verifier.store.gitrepo import ProjectRepo

pytestmark = [pytest.mark.slow, pytest.mark.postgres]  # two real `rw serve`, PostgreSQL, S3 and git daemon

LEASE_S = 2.0
LEAVES = 6
KILL_AFTER = 2  # acknowledged acceptances before the holder is killed


def _submit_anywhere(servers: list[Server], token: str, submission: Submission, key: str) -> tuple[Server, Reply]:
    """One submission, one key, retried against every instance until one answers with a verdict;
    (the instance that answered, its reply)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for server in servers:
            assert submission.leaf_id is not None
            try:
                reply = Client(server.url, token, retry_for_s=0.5, timeout_s=30).submit(
                    SLUG, submission.leaf_id, submission.bundle, submission.patch, key=key)
            except Unreachable:
                continue
            if reply.status in (200, 201):
                return server, reply
            raise AssertionError(f"{server.url} answered {reply.status}: {reply.body}")
        time.sleep(0.2)
    raise AssertionError(f"no instance accepted {submission.leaf_id} within 120 s")


def _host_rows(bare: Path) -> Counter[tuple[str | None, str]]:
    repo = ProjectRepo(bare)
    tip = repo.tip()
    assert tip is not None
    return Counter((row.leaf_id, row.outcome) for _, row in read_chain(repo.view(tip)) if row.action == "submit")


def test_the_survivor_takes_over_and_every_acknowledged_acceptance_is_on_the_host_once(
        instance_servers: tuple[str, str, Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dep = deployment(instance_servers, tmp_path, monkeypatch, leaves=LEAVES, lease_s=LEASE_S)
    token, submissions, bare = dep.token, dep.submissions, dep.bare
    a = start(dep.home_a.root, env=dep.env, port=dep.port_a)
    acked: list[dict[str, Any]] = []
    answered_by: list[Server] = []
    # a writes first, alone, so a holds the lease; then b joins (and has room: a keeps the project)
    first = _submit_anywhere([a], token, submissions[0], key="failover-0")
    acked.append(first[1].body["verdict"])
    answered_by.append(first[0])
    b = start(dep.home_b.root, env=dep.env, port=dep.port_b)
    killed = threading.Event()
    killed_at: list[float] = []

    def kill_a_mid_run() -> None:
        while len(acked) < KILL_AFTER:
            time.sleep(0.01)
        time.sleep(0.15)  # in the middle of the next submission
        killed_at.append(time.monotonic())
        a.kill()
        killed.set()

    killer = threading.Thread(target=kill_a_mid_run)
    killer.start()
    try:
        began = time.monotonic()
        for number, submission in enumerate(submissions[1:], start=1):
            server, reply = _submit_anywhere([a, b], token, submission, key=f"failover-{number}")
            acked.append(reply.body["verdict"])
            answered_by.append(server)
            if server is b and len(killed_at) == 1:
                killed_at.append(time.monotonic())  # the survivor's first acknowledgement
        elapsed = time.monotonic() - began
        killer.join(timeout=30)
        assert killed.is_set()
    finally:
        a.kill()
        b.stop()
    assert answered_by[:KILL_AFTER] == [a] * KILL_AFTER and answered_by[-1] is b  # b took over
    print(f"failover run: {LEAVES} submissions in {elapsed:.1f} s with a {LEASE_S} s lease; from the kill to "
          f"the survivor's first acknowledgement {killed_at[1] - killed_at[0]:.2f} s")
    host_tip = subprocess.run(["git", "--git-dir", str(bare), "rev-parse", "refs/heads/main"], check=True,
                              capture_output=True, text=True).stdout.strip()
    rows = _host_rows(bare)
    for verdict in acked:
        assert verdict["outcome"] == "accepted", verdict
        assert rows[(verdict["leaf_id"], "accepted")] == 1, rows  # on the host, exactly once
        assert ProjectRepo(bare).is_ancestor(verdict["commit"], host_tip)
    assert sum(count for (_, outcome), count in rows.items() if outcome == "accepted") == LEAVES

