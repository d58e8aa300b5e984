"""Failover between two real `rw serve` instances on one PostgreSQL Commons, one S3 trace store
(moto) and one git host (git daemon): the lease holder is killed (-9) in the middle of a run of
submissions; the client retries each submission, with its one Idempotency-Key, against both
instances; the survivor takes the project over once the lease runs out, and every acknowledged
acceptance is on the git host exactly once."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from tests.support_servers import free_port, git_daemon, postgres_cluster, s3_server
from verifier.pipeline.hosting import attach_remote
from verifier.pipeline.instances import resync
from verifier.pipeline.ledger import read_chain
from verifier.pipeline.project import init_project
from verifier.pipeline.verdict import Submission
from verifier.service.client import Client, Reply, Unreachable
from verifier.store.backends import Backends, CommonsBackend, TracesBackend
from verifier.store.fetcher import OfflineFetcher
from verifier.store.gitrepo import ProjectRepo
from verifier.store.home import Home

from .conftest import FIXTURES, NOW, SLUG, ScriptedAgent, World, make_home
from .service_harness import Server, distinct_findings, live_leaf, start

LEASE_S = 2.0
LEAVES = 6
KILL_AFTER = 2  # acknowledged acceptances before the holder is killed
DSN_ENV = "RW_TEST_COMMONS_DSN"
AWS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[tuple[str, str, Path, str]]:
    """(PostgreSQL DSN, S3 endpoint, the host's bare repository, its git:// URL)."""
    base = tmp_path / "served"
    bare = base / "project.git"
    subprocess.run(["git", "init", "-q", "--bare", "--initial-branch=main", str(bare)], check=True)
    with postgres_cluster() as dsn, s3_server() as endpoint, git_daemon(base) as prefix:
        yield dsn, endpoint, bare, f"{prefix}/project.git"


def _instance(home: Home, name: str, port: int, *, endpoint: str, url: str) -> Home:
    backends = Backends(
        traces=TracesBackend(kind="s3", bucket="traces", endpoint_url=endpoint, region="us-east-1"),
        commons=CommonsBackend(kind="postgres", dsn_env=DSN_ENV), remotes={SLUG: url},
        instance=name, instance_address=f"http://127.0.0.1:{port}", lease_s=LEASE_S)
    home.save_settings(home.settings.model_copy(update={"backends": backends}))
    return Home(home.root)


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
        servers: tuple[str, str, Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dsn, endpoint, bare, url = servers
    for name, value in {DSN_ENV: dsn, **AWS}.items():
        monkeypatch.setenv(name, value)
    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(Bucket="traces")
    home = make_home(tmp_path / "a")
    init_project(home, SLUG, now=NOW, template=FIXTURES / "demo-project")
    token = home.identities.add("agent-a", "op-a", "agent", NOW)
    for number in range(LEAVES):
        live_leaf(home, f"extract-{number}")
    attach_remote(home, SLUG, url)
    world = World(home, ScriptedAgent(home, "agent-a", "op-a", token), OfflineFetcher())
    submissions = [world.creation(f"extract-{n}", distinct_findings(world.agent, f"extract-{n}", 3 * n))
                   for n in range(LEAVES)]
    port_a, port_b = _free_ports()
    _instance(home, "a", port_a, endpoint=endpoint, url=url)
    (tmp_path / "b").mkdir()
    for name in ("config.json", "identities.json"):  # one identity registry in a deployment
        shutil.copy(home.root / name, tmp_path / "b" / name)
    home_b = _instance(Home(tmp_path / "b"), "b", port_b, endpoint=endpoint, url=url)
    resync(home_b, SLUG)  # b's cache of the project, from the host

    env = {DSN_ENV: dsn, **AWS}
    a, b = start(home.root, env=env, port=port_a), start(home_b.root, env=env, port=port_b)
    acked: list[dict[str, Any]] = []
    answered_by: list[Server] = []
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
        for number, submission in enumerate(submissions):
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


def _free_ports() -> tuple[int, int]:
    first = free_port()
    second = free_port()
    while second == first:
        second = free_port()
    return first, second



