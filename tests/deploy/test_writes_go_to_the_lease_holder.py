"""Two real `rw serve` instances of one deployment: any instance takes a write and it lands through
the instance holding the project's lease (a submission, a person's git push: forwarded), any instance
answers reads from a cache kept fresh from the git host, and the holder keeps its lease between
writes. PostgreSQL, moto and git daemon are started on loopback by the tests."""

from __future__ import annotations

import os
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.support.instances import DSN_ENV, Deployment, deployment
from tests.support.service_harness import Server, start
from tests.support.world import NOW, SLUG
from verifier.client.http import Client, encode_form
from verifier.commons import leases
from verifier.commons.pgdb import PgDatabase
from verifier.commons.pgidentities import PgIdentities
from verifier.deploy.forwarding import FORWARDED_BY
from verifier.deploy.spreading import LOAD_FRESH_S
from verifier.pipeline.ledger import read_chain
from verifier.store.gitrepo import ProjectRepo

pytestmark = [pytest.mark.slow, pytest.mark.postgres]  # two real `rw serve`, PostgreSQL, S3 and git daemon

LEASE_S = 2.0


def _host_rows(bare: Path) -> Counter[tuple[str | None, str]]:
    repo = ProjectRepo(bare)
    tip = repo.tip()
    assert tip is not None
    return Counter((row.leaf_id, row.outcome) for _, row in read_chain(repo.view(tip)) if row.action == "submit")


def _submit(url: str, dep: Deployment, number: int,
            headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    submission = dep.submissions[number]
    assert submission.leaf_id is not None
    client = Client(url, dep.token, retry_for_s=0)
    if headers is None:
        reply = client.submit(SLUG, submission.leaf_id, submission.bundle, submission.patch, key=f"k-{number}-0000")
        return reply.status, reply.body
    body, content_type = encode_form(dict(submission.bundle))
    reply = client.once("POST", f"/projects/{SLUG}/leaves/{submission.leaf_id}/submissions", body=body,
                        content_type=content_type, headers={"Idempotency-Key": f"k-{number}-raw0", **headers})
    return reply.status, reply.body


def test_a_write_sent_to_any_instance_lands_through_the_lease_holder(
        instance_servers: tuple[str, str, Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dep = deployment(instance_servers, tmp_path, monkeypatch, leaves=4, lease_s=LEASE_S)
    a = start(dep.home_a.root, env=dep.env, port=dep.port_a)
    db = PgDatabase(dep.env[DSN_ENV])
    b: Server | None = None
    try:
        status, body = _submit(a.url, dep, 0)  # a writes first, alone: a holds the lease
        assert status == 201 and body["verdict"]["outcome"] == "accepted", body
        b = start(dep.home_b.root, env=dep.env, port=dep.port_b)
        submission = dep.submissions[1]
        assert submission.leaf_id is not None
        reply = Client(b.url, dep.token, retry_for_s=0).submit(  # sent to b, forwarded to a
            SLUG, submission.leaf_id, submission.bundle, submission.patch, key="k-1-0000")
        status, body = reply.status, reply.body
        assert status == 201 and body["verdict"]["outcome"] == "accepted", body
        assert reply.headers["x-rw-instance"] == "a"  # the instance that ran it, through b's relay
        holder = leases.holder(db, SLUG)
        assert holder is not None and holder.holder == "a"  # b never took the project
        ran = db.read("SELECT instance FROM submissions WHERE id = ?", (body["submission_id"],))
        assert [row["instance"] for row in ran] == ["a"]  # run by a

        # A request already forwarded once is not forwarded again: b answers for itself (503, a holds it).
        status, body = _submit(b.url, dep, 2, headers={FORWARDED_BY: "a"})
        assert status == 503 and "a (http://127.0.0.1:" in body["error"]["message"], body

        time.sleep(LEASE_S * 1.5)  # no writes: a's worker keeps the lease renewed
        holder = leases.holder(db, SLUG)
        assert holder is not None and holder.holder == "a"

        # b answers reads from its cache, brought to the host's branch (at most a second stale).
        deadline = time.monotonic() + 10
        while True:
            accepted = Client(b.url, retry_for_s=5).get(f"/projects/{SLUG}/leaves", {"state": "accepted"}, auth=False)
            if {leaf["leaf_id"] for leaf in accepted.body["leaves"]} >= {"extract-0", "extract-1"}:
                break
            assert time.monotonic() < deadline, accepted.body
            time.sleep(0.3)

    finally:
        db.close()
        a.stop()
        if b is not None:
            b.stop()
    rows = _host_rows(dep.bare)
    assert rows[("extract-0", "accepted")] == rows[("extract-1", "accepted")] == 1
    assert ("extract-2", "accepted") not in rows  # the refused one left nothing


def test_a_write_forwarded_to_a_dead_holder_is_retried_until_the_survivor_takes_the_project(
        instance_servers: tuple[str, str, Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dep = deployment(instance_servers, tmp_path, monkeypatch, leaves=2, lease_s=LEASE_S)
    a = start(dep.home_a.root, env=dep.env, port=dep.port_a)
    b: Server | None = None
    try:
        assert _submit(a.url, dep, 0)[0] == 201  # a writes first, alone: a holds the lease
        b = start(dep.home_b.root, env=dep.env, port=dep.port_b)
        a.kill()
        killed = time.monotonic()
        submission = dep.submissions[1]
        assert submission.leaf_id is not None
        # The client's own retry of a 503 (the holder did not answer b's forward) carries it over.
        reply = Client(b.url, dep.token, retry_for_s=60).submit(SLUG, submission.leaf_id, submission.bundle,
                                                                 submission.patch, key="after-the-kill")
        assert reply.status == 201 and reply.body["verdict"]["outcome"] == "accepted", reply.body
        assert time.monotonic() - killed < 30
    finally:
        a.kill()
        if b is not None:
            b.stop()
    rows = _host_rows(dep.bare)
    assert rows[("extract-0", "accepted")] == rows[("extract-1", "accepted")] == 1


def test_a_persons_push_sent_to_another_instance_lands_through_the_lease_holder(
        instance_servers: tuple[str, str, Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dep = deployment(instance_servers, tmp_path, monkeypatch, leaves=1, lease_s=LEASE_S)
    registry = dep.home_a.identities
    assert isinstance(registry, PgIdentities)  # one registry for both instances
    person = registry.add("steward", "steward", "human", NOW)
    registry.close()
    a = start(dep.home_a.root, env=dep.env, port=dep.port_a)
    b: Server | None = None
    try:
        assert _submit(a.url, dep, 0)[0] == 201  # a writes first, alone: a holds the lease
        b = start(dep.home_b.root, env=dep.env, port=dep.port_b)
        env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"}
        work = tmp_path / "work"
        subprocess.run(["git", "clone", "-q", instance_servers[3], str(work)], check=True, env=env, timeout=60)
        (work / "NOTES.md").write_text("a person's note, pushed to the other instance\n")
        subprocess.run(["git", "-C", str(work), "add", "NOTES.md"], check=True, env=env)
        subprocess.run(["git", "-C", str(work), "-c", "user.name=S", "-c", "user.email=s@example.org", "commit",
                        "-qm", "note"], check=True, env=env)
        pushed = subprocess.run(
            ["git", "-c", f"http.extraHeader=Authorization: Bearer {person}", "-C", str(work), "push",
             f"{b.url}/projects/{SLUG}.git", "HEAD:refs/for/main"], capture_output=True, text=True, env=env,
            timeout=120, check=False)
        assert pushed.returncode == 0 and "remote: ACCEPTED" in pushed.stderr, pushed.stderr
    finally:
        a.stop()
        if b is not None:
            b.stop()
    assert b is not None
    assert "git-receive-pack 200" in b.output() and "git-receive-pack 200" in a.output()  # through b to a
    host = ProjectRepo(dep.bare)
    tip = host.tip()
    assert tip is not None and host.view(tip).read("NOTES.md") == b"a person's note, pushed to the other instance\n"


def test_a_project_nobody_writes_is_placed_on_the_least_loaded_instance_wherever_its_write_arrives(
        instance_servers: tuple[str, str, Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dep = deployment(instance_servers, tmp_path, monkeypatch, leaves=1, lease_s=LEASE_S)
    a = start(dep.home_a.root, env=dep.env, port=dep.port_a)
    b = start(dep.home_b.root, env=dep.env, port=dep.port_b)
    db = PgDatabase(dep.env[DSN_ENV])
    try:
        deadline = time.monotonic() + 20
        while set(leases.live_load(db, live_s=LEASE_S)) != {"a", "b"}:  # both beat
            assert time.monotonic() < deadline
            time.sleep(0.1)
        time.sleep(LEASE_S + 0.5)  # the leases start-up recovery took have run out
        assert leases.holder(db, SLUG) is None
        assert leases.acquire(db, "busy-project", "a", f"http://127.0.0.1:{dep.port_a}", ttl_s=60) is not None
        time.sleep(LOAD_FRESH_S + 0.2)  # the instances read the load afresh
        status, body = _submit(a.url, dep, 0)  # sent to a, which writes another project already
        assert status == 201 and body["verdict"]["outcome"] == "accepted", body
        holder = leases.holder(db, SLUG)
        assert holder is not None and holder.holder == "b"  # placed on b, the instance with room
    finally:
        db.close()
        a.stop()
        b.stop()
