"""The remote half of scripts/load.py (`--backends remote`): the same planned submissions across two
`rw serve` instances sharing a PostgreSQL Commons, an S3-compatible trace store (moto) and a git
host (`git daemon`), all started on loopback by `tests.support.devservers`. The instances split the
projects between them (placed on the least-loaded live instance, verifier.deploy.spreading);
every agent sends a submission to instance p % 2 for project p, which forwards it to the instance
writing the project, and, with the submission's one Idempotency-Key, to the other instance when
that one is unreachable or answers 503. Mid-run the lease holder of project 0 is killed (-9);
`failover_s` runs from the kill to the first landing on the survivor of a project the dead
instance held.

Checks afterwards, against the git host only: a submission is `lost` if it was acknowledged
accepted but its contribution commit is not on the host's branch exactly once, `duplicated` if one
submission's objects landed more than once (two accepted rows for it); a crash row left by the
killed attempt, followed by the retry's acceptance, is neither. A same-key replay (HTTP 200) is an
answer like any other.

Measured (15 s runs, 16 agents, 4 projects, load average 8-11 from other sessions on 2 cores):
ratio 0.24-0.67 to the embedded instance, failover 2.5-4.5 s, lost 0, duplicated 0; in the two
runs counted by part, 104-105 ms of CPU per submission remote against 37-47 ms embedded: the
instances 55-57, their pushes 10, the git host's receive-packs 23-24, moto 9, PostgreSQL 6
(docs/deploy.md, "Where the remote CPU goes, by part")."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import boto3

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.support, from a fresh checkout
from tests.support.devservers import git_daemon, postgres_cluster, s3_server
from verifier.client.http import Client
from verifier.commons import leases
from verifier.commons.pgdb import PgDatabase
from verifier.deploy.hosting import attach_remote
from verifier.deploy.instances import resync
from verifier.errors import Unreachable
from verifier.pipeline.ledger import read_chain
from verifier.store.backends import Backends, CommonsBackend, TracesBackend
from verifier.store.gitrepo import VERIFIER_EMAIL, ProjectRepo
from verifier.store.home import Home
from verifier.wiring import open_home

DSN_ENV = "RW_LOAD_COMMONS_DSN"
AWS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}
GIVE_UP_S = 120.0


@dataclass
class Deployment:
    """The shared servers and the two instances' homes."""

    env: dict[str, str]
    hosts: Path  # the git daemon's base: one bare repository per project, SLUG.git
    homes: list[Path]


@dataclass
class Instance:
    name: str
    port: int
    proc: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@dataclass
class Failover:
    """The kill of the lease holder and the survivor's first landing of one of its projects."""

    victim: str = ""
    victim_slugs: frozenset[str] = frozenset()
    started_at: float | None = None  # the agents' start (monotonic)
    killed_at: float | None = None
    first_landing_at: float | None = None
    victim_cpu: tuple[float, float] = (0.0, 0.0)  # the victim's CPU just before the kill (load.instance_cpu_s)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def landed(self, instance: str, slug: str) -> None:
        with self.lock:
            if (self.killed_at is not None and self.first_landing_at is None and instance != self.victim
                    and slug in self.victim_slugs):
                self.first_landing_at = time.monotonic()

    @property
    def seconds(self) -> float | None:
        if self.killed_at is None or self.first_landing_at is None:
            return None
        return self.first_landing_at - self.killed_at


@contextlib.contextmanager
def deployment(template: Path, scratch: Path, slugs: list[str], *, lease_s: float,
               free_port: Callable[[], int]) -> Iterator[tuple[Deployment, list[int]]]:
    """PostgreSQL, moto and git daemon on loopback; two homes made from `template`, each project
    pushed to its bare repository on the host; yields the deployment and the instances' ports."""
    hosts = scratch / "hosts"
    hosts.mkdir()
    for slug in slugs:
        subprocess.run(["git", "init", "-q", "--bare", "--initial-branch=main", str(hosts / f"{slug}.git")],
                       check=True)
    with postgres_cluster() as dsn, s3_server() as endpoint, git_daemon(hosts) as prefix:
        env = {DSN_ENV: dsn, **AWS}
        os.environ.update(env)
        boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(Bucket="traces")
        ports = [free_port(), free_port()]
        while ports[1] == ports[0]:
            ports[1] = free_port()
        homes = [scratch / "a", scratch / "b"]
        shutil.copytree(template, homes[0])
        home_a = open_home(homes[0])
        for slug in slugs:
            attach_remote(home_a, slug, f"{prefix}/{slug}.git")
        homes[1].mkdir()
        for name in ("config.json", "identities.json"):  # one identity registry in a deployment
            shutil.copy(homes[0] / name, homes[1] / name)
        for home, name, port in zip(homes, "ab", ports, strict=True):
            configure(open_home(home), name, port, endpoint=endpoint, lease_s=lease_s)
        for slug in slugs:
            resync(open_home(homes[1]), slug)  # b's cache of every project, from the host
        yield Deployment(env, hosts, homes), ports


def dsn_port(dep: Deployment) -> int:
    """The PostgreSQL port of the deployment's connection string."""
    found = re.search(r"port=(\d+)", dep.env[DSN_ENV])
    if found is None:
        raise SystemExit(f"no port in {dep.env[DSN_ENV]!r}")
    return int(found[1])


def configure(home: Home, name: str, port: int, *, endpoint: str, lease_s: float) -> None:
    backends = Backends(
        traces=TracesBackend(kind="s3", bucket="traces", endpoint_url=endpoint, region="us-east-1"),
        commons=CommonsBackend(kind="postgres", dsn_env=DSN_ENV), remotes=home.settings.backends.remotes,
        instance=name, instance_address=f"http://127.0.0.1:{port}", lease_s=lease_s)
    home.save_settings(home.settings.model_copy(update={"backends": backends}))


@contextlib.contextmanager
def instances(dep: Deployment, ports: list[int], *, rw: str, workers: int, logs: Path, lease_s: float,
              wait_ready: Callable[[int, subprocess.Popen[bytes]], None]) -> Iterator[list[Instance]]:
    """Both instances serving for the block (any still alive is stopped afterwards)."""
    running: list[Instance] = []
    try:
        for home, name, port in zip(dep.homes, "ab", ports, strict=True):
            env = {**os.environ, **dep.env, "RW_HOME": str(home)}
            with (logs / f"serve-{name}.log").open("wb") as out:
                proc = subprocess.Popen([rw, "serve", "--port", str(port), "--workers", str(workers)], env=env,
                                        stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
            running.append(Instance(name, port, proc))
            wait_ready(port, proc)
        # Start-up recovery opens every project's writer, so each instance takes the leases of the
        # projects no one holds: let those lapse, so the first writes split the projects by lease.
        time.sleep(lease_s + 0.5)
        yield running
    finally:
        for instance in running:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(instance.proc.pid, signal.SIGTERM)
            try:
                instance.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(instance.proc.pid, signal.SIGKILL)
                instance.proc.wait(timeout=30)


def holder_of(slug: str, running: list[Instance]) -> tuple[Instance, list[str]]:
    """The instance holding `slug`'s lease now, and every project it holds."""
    db = PgDatabase(os.environ[DSN_ENV])
    try:
        lease = leases.holder(db, slug)
        name = lease.holder if lease is not None else running[0].name
        return next(instance for instance in running if instance.name == name), leases.held_by(db, name)
    finally:
        db.close()


def kill(instance: Instance) -> None:
    """kill -9 of the whole instance: its main process and its workers."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(instance.proc.pid, signal.SIGKILL)
    instance.proc.wait(timeout=30)


def submit_anywhere(order: list[Instance], token: str, slug: str, leaf_id: str, bundle: dict[str, bytes],
                    patch: bytes, key: str) -> tuple[Instance, int, dict[str, object]]:
    """One submission, one key, tried on each instance in turn until one answers with anything
    but unreachable or 503; (the instance that ran it, the status, the body)."""
    deadline = time.monotonic() + GIVE_UP_S
    while time.monotonic() < deadline:
        for instance in order:
            try:
                reply = Client(instance.url, token, retry_for_s=0.3, timeout_s=60.0).submit(
                    slug, leaf_id, bundle, patch, key=key)
            except Unreachable:
                continue
            ran = next((i for i in order if i.name == reply.headers.get("x-rw-instance")), instance)
            return ran, reply.status, reply.body  # the instance that ran it, though another forwarded it
        time.sleep(0.1)
    raise Unreachable(f"no instance answered {slug}/{leaf_id} within {GIVE_UP_S:g} s")


def host_counts(hosts: Path, slug: str) -> tuple[Counter[str], set[str], set[str], int]:
    """On the host's branch of `slug`: accepted rows per trace id, the accepted rows' commits,
    the contribution commits (everything the verifier did not author) and the crash rows (the
    killed instance's interrupted attempts, settled by the survivor)."""
    repo = ProjectRepo(hosts / f"{slug}.git")
    tip = repo.tip()
    assert tip is not None
    rows = [row for _, row in read_chain(repo.view(tip)) if row.action == "submit"]
    accepted = Counter(row.trace_id or "" for row in rows if row.outcome in ("accepted", "held"))
    commits = {row.commit for row in rows if row.outcome in ("accepted", "held") and row.commit}
    contributions: set[str] = set()
    commit = repo.commit(tip) if tip else None
    while commit is not None:
        if commit.author.email != VERIFIER_EMAIL:
            contributions.add(str(commit.id))
        commit = commit.parents[0] if commit.parents else None
    return accepted, commits, contributions, sum(1 for row in rows if row.outcome == "crash")

