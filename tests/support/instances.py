"""Two verifier instances of one deployment, for the tests of several instances: one PostgreSQL
Commons, one S3 trace store (moto), one git host (git daemon), all started on loopback; two homes
with one identity registry, each naming its own instance, the project on the host."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import boto3
import pytest

from tests.support.servers import free_port, git_daemon, postgres_cluster, s3_server
from tests.support.service_harness import distinct_findings, live_leaf
from tests.support.world import FIXTURES, NOW, SLUG, ScriptedAgent, World, make_home
from verifier.deploy.hosting import attach_remote
from verifier.deploy.instances import resync
from verifier.pipeline.verdict import Submission
from verifier.store.backends import Backends, CommonsBackend, TracesBackend
from verifier.store.fetcher import OfflineFetcher
from verifier.store.home import Home
from verifier.wiring import open_home
from verifier.writes.project import init_project

DSN_ENV = "RW_TEST_COMMONS_DSN"
AWS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}


@dataclass
class Deployment:
    home_a: Home
    home_b: Home
    port_a: int
    port_b: int
    token: str
    world: World  # on home a: makes the submissions
    submissions: list[Submission]
    bare: Path  # the git host's repository of the project
    env: dict[str, str]  # what each `rw serve` needs in its environment


def served_backends(tmp_path: Path) -> Iterator[tuple[str, str, Path, str]]:
    """(PostgreSQL DSN, S3 endpoint, the host's bare repository, its git:// URL), for the block:
    the body of conftest's `instance_servers` fixture."""
    base = tmp_path / "served"
    bare = base / "project.git"
    subprocess.run(["git", "init", "-q", "--bare", "--initial-branch=main", str(bare)], check=True)
    with postgres_cluster() as dsn, s3_server() as endpoint, git_daemon(base) as prefix:
        yield dsn, endpoint, bare, f"{prefix}/project.git"


def configure(home: Home, name: str, port: int, *, endpoint: str, url: str, lease_s: float) -> Home:
    backends = Backends(
        traces=TracesBackend(kind="s3", bucket="traces", endpoint_url=endpoint, region="us-east-1"),
        commons=CommonsBackend(kind="postgres", dsn_env=DSN_ENV), remotes={SLUG: url},
        instance=name, instance_address=f"http://127.0.0.1:{port}", lease_s=lease_s)
    home.save_settings(home.settings.model_copy(update={"backends": backends}))
    return open_home(home.root)


def deployment(servers: tuple[str, str, Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *,
               leaves: int, lease_s: float) -> Deployment:
    """The project with `leaves` open extract leaves on the host, homes a and b configured (not
    serving yet), and one accepted-to-be submission per leaf."""
    dsn, endpoint, bare, url = servers
    env = {DSN_ENV: dsn, **AWS}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(Bucket="traces")
    home = make_home(tmp_path / "a")
    init_project(home, SLUG, now=NOW, template=FIXTURES / "demo-project")
    token = home.identities.add("agent-a", "op-a", "agent", NOW)
    for number in range(leaves):
        live_leaf(home, f"extract-{number}")
    attach_remote(home, SLUG, url)
    world = World(home, ScriptedAgent(home, "agent-a", "op-a", token), OfflineFetcher())
    submissions = [world.creation(f"extract-{n}", distinct_findings(world.agent, f"extract-{n}", 3 * n))
                   for n in range(leaves)]
    port_a = free_port()
    port_b = free_port()
    while port_b == port_a:
        port_b = free_port()
    home_a = configure(home, "a", port_a, endpoint=endpoint, url=url, lease_s=lease_s)
    (tmp_path / "b").mkdir()
    for name in ("config.json", "identities.json"):  # one identity registry in a deployment
        shutil.copy(home.root / name, tmp_path / "b" / name)
    home_b = configure(open_home(tmp_path / "b"), "b", port_b, endpoint=endpoint, url=url, lease_s=lease_s)
    resync(home_b, SLUG)  # b's cache of the project, from the host
    return Deployment(home_a, home_b, port_a, port_b, token, world, submissions, bare, env)
