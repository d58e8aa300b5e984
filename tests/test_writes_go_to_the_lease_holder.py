"""Two real `rw serve` instances of one deployment: any instance takes a write and it lands through
the instance holding the project's lease (forwarded; a person's push redirected), any instance
answers reads from a cache kept fresh from the git host, and the holder keeps its lease between
writes. PostgreSQL, moto and git daemon are started on loopback by the tests."""

from __future__ import annotations

import http.client
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from verifier.commons import leases
from verifier.commons.pgdb import PgDatabase
from verifier.pipeline.ledger import read_chain
from verifier.service.client import Client, encode_form
from verifier.service.forwarding import FORWARDED_BY
from verifier.store.gitrepo import ProjectRepo

from .conftest import SLUG
from .service_harness import start
from .support_instances import DSN_ENV, Deployment, deployment

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
    b = start(dep.home_b.root, env=dep.env, port=dep.port_b)
    db = PgDatabase(dep.env[DSN_ENV])
    try:
        status, body = _submit(a.url, dep, 0)  # a writes first: a holds the lease
        assert status == 201 and body["verdict"]["outcome"] == "accepted", body
        status, body = _submit(b.url, dep, 1)  # sent to b, forwarded to a
        assert status == 201 and body["verdict"]["outcome"] == "accepted", body
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

        # A person's push sent to b is redirected to a (git follows the redirect of its first request).
        conn = http.client.HTTPConnection("127.0.0.1", dep.port_b, timeout=10)
        conn.request("GET", f"/projects/{SLUG}.git/info/refs?service=git-receive-pack")
        redirect = conn.getresponse()
        redirect.read()
        conn.close()
        assert redirect.status == 307
        assert redirect.getheader("location") == (f"http://127.0.0.1:{dep.port_a}/projects/{SLUG}.git/info/refs"
                                                 "?service=git-receive-pack")
    finally:
        db.close()
        a.stop()
        b.stop()
    rows = _host_rows(dep.bare)
    assert rows[("extract-0", "accepted")] == rows[("extract-1", "accepted")] == 1
    assert ("extract-2", "accepted") not in rows  # the refused one left nothing


def test_a_write_forwarded_to_a_dead_holder_is_retried_until_the_survivor_takes_the_project(
        instance_servers: tuple[str, str, Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dep = deployment(instance_servers, tmp_path, monkeypatch, leaves=2, lease_s=LEASE_S)
    a = start(dep.home_a.root, env=dep.env, port=dep.port_a)
    b = start(dep.home_b.root, env=dep.env, port=dep.port_b)
    try:
        assert _submit(a.url, dep, 0)[0] == 201
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
        b.stop()
    rows = _host_rows(dep.bare)
    assert rows[("extract-0", "accepted")] == rows[("extract-1", "accepted")] == 1
