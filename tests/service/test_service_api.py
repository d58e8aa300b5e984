"""The service end to end against a real `rw serve` process on loopback: authentication, tokens
kept out of URLs, Host and Origin, content types, body caps and time limits, claims and expiry,
accepted and rejected submissions, retries, concurrency on one base, and open reading."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest

from tests.support.service_harness import RW, Server, distinct_findings, live_leaf, raw_request, start
from tests.support.waiting import until
from tests.support.world import FIXTURES, NOW, ROOT, SLUG, ScriptedAgent, World, make_home
from verifier.audits.audit import verify_ledger
from verifier.client.http import Client, Reply, encode_form
from verifier.constants import MAX_BUNDLE_BYTES
from verifier.pipeline.ledger import read_chain
from verifier.pipeline.submit import Submission
from verifier.service.openapi import openapi_document
from verifier.store.fetcher import OfflineFetcher
from verifier.writes.project import init_project

pytestmark = pytest.mark.slow  # a real `rw serve` on loopback


@dataclass
class Site:
    world: World
    other: ScriptedAgent
    server: Server

    def client(self, token: str | None = None) -> Client:
        return self.server.client(token)

    @property
    def a(self) -> Client:
        return self.client(self.world.agent.token)

    @property
    def b(self) -> Client:
        return self.client(self.other.token)

    def rows(self) -> list:  # type: ignore[type-arg]
        return [row for _, row in read_chain(self.world.repo.view(self.world.tip()))]

    def traces(self) -> set[str]:
        root = self.world.home.root / "traces"
        return {path.name for path in root.iterdir()} if root.exists() else set()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("service")
    home = make_home(root / "home")
    init_project(home, SLUG, now=NOW, template=FIXTURES / "demo-project")
    token_a = home.identities.add("agent-a", "op-a", "agent", NOW)
    token_b = home.identities.add("agent-b", "op-b", "agent", NOW)
    world = World(home, ScriptedAgent(home, "agent-a", "op-a", token_a), OfflineFetcher())
    server = start(home.root, "--header-timeout", "1", "--body-idle-timeout", "1")
    yield Site(world, ScriptedAgent(home, "agent-b", "op-b", token_b), server)
    server.stop()


def submit(client: Client, submission: Submission, key: str | None = None) -> Reply:
    return client.submit(submission.slug, submission.leaf_id or "", submission.bundle, submission.patch, key=key)


def creation(site: Site, leaf_id: str, first: int, agent: ScriptedAgent | None = None) -> Submission:
    who = agent or site.world.agent
    return site.world.creation(leaf_id, distinct_findings(who, leaf_id, first), agent=who)


LEAF = f"/projects/{SLUG}/leaves"


def test_openapi_is_served_and_kept_in_the_repository(site: Site) -> None:
    served = site.client().get("/openapi.json", auth=False)
    assert served.status == 200
    kept = json.loads((ROOT / "docs" / "openapi.json").read_text())
    assert served.body == kept == openapi_document()


def test_reading_is_open(site: Site) -> None:
    anonymous = site.client()
    digest = anonymous.get(f"/projects/{SLUG}/digest", auth=False)
    assert digest.status == 200 and digest.body["project"] == SLUG and "hypotheses" in digest.body
    assert anonymous.get("/projects", auth=False).body["projects"][0]["project"] == SLUG
    assert anonymous.get(f"/projects/{SLUG}/ledger", auth=False).body["rows"][0]["action"] == "init"
    live_leaf(site.world.home, "page-1")
    live_leaf(site.world.home, "page-2")
    page = anonymous.get(f"/projects/{SLUG}/ledger", {"after": 0, "limit": 2}, auth=False).body["rows"]
    assert [row["seq"] for row in page] == [1, 2]
    assert anonymous.get(f"/projects/{SLUG}/ledger", {"limit": 0}, auth=False).error_code == "bad_query"
    assert anonymous.get("/projects/no-such-project/digest", auth=False).error_code == "no_project"


def test_missing_malformed_and_unknown_tokens(site: Site) -> None:
    live_leaf(site.world.home, "auth-1")
    anonymous = site.client()
    missing = anonymous.post_json(f"{LEAF}/auth-1/claim", {})
    assert (missing.status, missing.error_code) == (401, "no_token")
    assert missing.headers["www-authenticate"].startswith("Bearer")
    basic = anonymous.request("POST", f"{LEAF}/auth-1/claim", body=b"{}", content_type="application/json",
                              headers={"Authorization": "Basic YWdlbnQ6cGFzcw=="})
    assert (basic.status, basic.error_code) == (401, "bad_auth_scheme")
    assert site.client("not-a-token").get("/messages").error_code == "bad_token"
    unknown = site.client("rwt_" + "A" * 43).post_json(f"{LEAF}/auth-1/claim", {})
    assert (unknown.status, unknown.error_code) == (401, "bad_token")
    assert anonymous.get("/messages", auth=False).status == 401


def test_token_in_the_url_is_refused_and_never_logged(site: Site) -> None:
    token = site.world.agent.token
    anonymous = site.client()
    for path in (f"/messages?access_token={token}", f"/projects?x={token}", f"/projects/{token}/digest",
                 "/projects?token=anything"):
        reply = anonymous.request("GET", path, auth=False)
        assert (reply.status, reply.error_code) == (400, "token_in_url"), path
        assert token not in json.dumps(reply.body)
    assert site.a.get("/messages").status == 200  # the same token in its header is fine
    until(lambda: "GET /messages 200" in site.server.output(), "the access log line of GET /messages")
    log = site.server.output()
    assert "GET /messages 200" in log and "[refused URL]" in log
    assert token not in log and site.other.token not in log


def test_wrong_host_and_other_origins(site: Site) -> None:
    port = site.server.port
    wrong = raw_request(port, b"GET /health HTTP/1.1\r\nHost: attacker.example\r\nConnection: close\r\n\r\n")
    assert wrong.startswith(b"HTTP/1.1 421") and b"wrong_host" in wrong
    rebinding = raw_request(port, f"GET /health HTTP/1.1\r\nHost: attacker.example:{port}\r\n"
                                  "Connection: close\r\n\r\n".encode())
    assert rebinding.startswith(b"HTTP/1.1 421")
    assert raw_request(port, b"GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n") \
        .startswith(b"HTTP/1.1 200")
    # A header read one way here and another by a proxy in front is refused, not guessed at.
    for headers in (f"Host: 127.0.0.1:{port}\r\nHost: evil.example",
                    f"Host: 127.0.0.1:{port}\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b"):
        doubled = raw_request(port, f"GET /health HTTP/1.1\r\n{headers}\r\nConnection: close\r\n\r\n".encode())
        assert doubled.startswith(b"HTTP/1.1 400") and b"duplicate_header" in doubled, doubled[:200]
    twice = site.a.get("/messages?after=1&after=9")
    assert (twice.status, twice.error_code) == (400, "bad_query") and "'after'" in twice.error_message
    live_leaf(site.world.home, "origin-1")
    cross = site.a.request("POST", f"{LEAF}/origin-1/claim", body=b"{}", content_type="application/json",
                           headers={"Origin": "https://attacker.example"})
    assert (cross.status, cross.error_code) == (403, "cross_origin")
    other_port = site.a.request("POST", f"{LEAF}/origin-1/claim", body=b"{}", content_type="application/json",
                                headers={"Origin": "http://127.0.0.1:1"})
    assert (other_port.status, other_port.error_code) == (403, "cross_origin")
    latin = site.a.request("POST", f"{LEAF}/origin-1/claim", body=b"{}",
                           content_type="application/json; charset=latin-1")
    assert (latin.status, latin.error_code) == (415, "unsupported_media_type") and "UTF-8" in latin.error_message
    fetch_site = site.a.request("POST", f"{LEAF}/origin-1/claim", body=b"{}", content_type="application/json",
                                headers={"Sec-Fetch-Site": "cross-site"})
    assert fetch_site.status == 403
    same = site.a.request("POST", f"{LEAF}/origin-1/claim", body=b"{}", content_type="application/json",
                          headers={"Origin": f"http://127.0.0.1:{port}"})
    assert same.status == 200, same.body


def test_wrong_content_types(site: Site) -> None:
    live_leaf(site.world.home, "ctype-1")
    as_json = site.a.request("POST", f"{LEAF}/ctype-1/submissions", body=b"{}", content_type="application/json")
    assert (as_json.status, as_json.error_code) == (415, "unsupported_media_type")
    for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
        reply = site.a.request("POST", f"{LEAF}/ctype-1/claim", body=b"{}", content_type=content_type)
        assert (reply.status, reply.error_code) == (415, "unsupported_media_type"), content_type
    no_boundary = site.a.request("POST", f"{LEAF}/ctype-1/submissions", body=b"x", content_type="multipart/form-data")
    assert (no_boundary.status, no_boundary.error_code) == (400, "bad_form")
    stray = site.a.request("POST", f"{LEAF}/ctype-1/submissions", body=encode_form({"notes.txt": b"x"})[0],
                           content_type=encode_form({"notes.txt": b"x"})[1])
    assert stray.error_code == "bad_form"  # every form has its own boundary: the body does not match the header


def test_oversize_bodies_are_refused_with_nothing_stored(site: Site) -> None:
    world = site.world
    live_leaf(world.home, "big-1")
    rows, traces = len(site.rows()), site.traces()
    # Declared too large: refused before a byte of the body is read.
    head = (f"POST {LEAF}/big-1/submissions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
            f"{world.agent.token}\r\nContent-Type: multipart/form-data; boundary=b\r\n"
            f"Content-Length: {64 * 1024 * 1024}\r\n\r\n").encode()
    assert raw_request(site.server.port, head).startswith(b"HTTP/1.1 413")
    # Within the declared limit, but the bundle crosses 20 MB while it streams.
    submission = creation(site, "big-1", 0)
    bundle = {**submission.bundle, "context.md": b"x" * (MAX_BUNDLE_BYTES + 1)}
    reply = site.a.submit(SLUG, "big-1", bundle)
    assert (reply.status, reply.error_code) == (413, "too_large")
    # No Content-Length at all (chunked): the cap still holds as the bytes arrive.
    with socket.create_connection(("127.0.0.1", site.server.port), timeout=10) as sock:
        sock.sendall(head.replace(f"Content-Length: {64 * 1024 * 1024}".encode(), b"Transfer-Encoding: chunked"))
        part = b'--b\r\nContent-Disposition: form-data; name="context.md"\r\n\r\n'
        sock.sendall(b"%x\r\n%s\r\n" % (len(part), part))
        chunk = b"%x\r\n%s\r\n" % (1024 * 1024, b"y" * 1024 * 1024)
        answer = b""
        try:
            for _ in range(40):
                sock.sendall(chunk)
        except OSError:
            pass  # the service stopped reading: it has answered
        sock.settimeout(10)
        with contextlib.suppress(OSError):
            answer = sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 413") or answer == b""
    assert len(site.rows()) == rows and site.traces() == traces
    assert site.a.get(f"/projects/{SLUG}/leaves/big-1").body["state"] == "open"


def test_claims_exclude_others_and_expire(site: Site) -> None:
    live_leaf(site.world.home, "claim-1")
    # Long enough for the blocked submission below on a loaded machine, short enough to wait out.
    mine = site.a.post_json(f"{LEAF}/claim-1/claim", {"ttl_s": 4, "agent": "agent-a"})
    assert mine.status == 200 and mine.body["agent"] == "agent-a"
    theirs = site.b.post_json(f"{LEAF}/claim-1/claim", {})
    assert (theirs.status, theirs.error_code) == (409, "leaf_claimed")
    assert theirs.body["error"]["detail"]["claimed_by"] == "agent-a"
    board = site.client().get(f"{LEAF}", {"state": "claimed"}, auth=False).body["leaves"]
    assert [leaf["claimed_by"] for leaf in board if leaf["leaf_id"] == "claim-1"] == ["agent-a"]
    blocked = submit(site.b, creation(site, "claim-1", 3, site.other))
    assert (blocked.status, blocked.error_code) == (409, "leaf_claimed")
    # The claim expires: the leaf is back in the pool (awaited: 4 s on an idle machine).
    until(lambda: site.client().get(f"{LEAF}/claim-1", auth=False).body["state"] == "open",
          "the claimed leaf open again once its 4 s claim ran out", poll_s=0.2)
    assert site.b.post_json(f"{LEAF}/claim-1/claim", {"ttl_s": 600}).status == 200
    assert site.a.request("DELETE", f"{LEAF}/claim-1/claim").error_code == "no_claim"
    assert site.b.request("DELETE", f"{LEAF}/claim-1/claim").body["released"] is True
    invalid = site.a.post_json(f"{LEAF}/claim-1/claim", {"ttl_s": 0})
    assert (invalid.status, invalid.error_code) == (422, "invalid_body") and "ttl_s" in invalid.error_message
    assert site.a.post_json(f"{LEAF}/claim-1/claim", {"ttl": 5}).error_code == "invalid_body"


def test_leaf_expiry(site: Site) -> None:
    live_leaf(site.world.home, "expiring-1", expires_in=timedelta(seconds=2))
    submission = creation(site, "expiring-1", 6)
    until(lambda: site.client().get(f"{LEAF}/expiring-1", auth=False).body["state"] == "expired",
          "the leaf expired 2 s after it was written", poll_s=0.2)
    claim = site.a.post_json(f"{LEAF}/expiring-1/claim", {})
    assert (claim.status, claim.error_code) == (409, "leaf_expired")
    assert site.client().get(f"{LEAF}/expiring-1", auth=False).body["state"] == "expired"
    late = submit(site.a, submission)
    assert late.status == 201 and late.body["verdict"]["rejections"][0]["code"] == "leaf_expired"


def test_accepted_and_rejected_submissions(site: Site) -> None:
    world = site.world
    live_leaf(world.home, "accept-1")
    accepted = submit(site.a, creation(site, "accept-1", 10))
    assert accepted.status == 201, accepted.body
    verdict = accepted.body["verdict"]
    assert verdict["outcome"] == "accepted" and verdict["commit"] and accepted.headers["location"].endswith(
        accepted.body["submission_id"])
    assert world.repo.is_ancestor(verdict["commit"], world.tip())
    record = site.a.get(f"/submissions/{accepted.body['submission_id']}").body
    assert record["state"] == "done" and record["verdict"]["ledger_seq"] == verdict["ledger_seq"]
    thread = site.client().get(f"{LEAF}/accept-1/messages", auth=False).body["messages"]
    assert [m["kind"] for m in thread] == ["outcome"] and thread[0]["body"].startswith("ACCEPTED")
    assert "trace" not in json.dumps(thread).lower()  # threads are open; traces are private
    inbox = site.a.get("/messages").body["messages"]
    first = [m for m in inbox if m["kind"] == "first_minute"]
    assert len(first) == 1 and first[0]["data"]["project"] == SLUG and first[0]["data"]["digest"]["project"] == SLUG
    assert site.client().get(f"{LEAF}/accept-1", auth=False).body["state"] == "accepted"

    live_leaf(world.home, "reject-1")
    rejected = submit(site.a, world.extract("reject-1", "extract-bad-excerpt.yaml"))
    assert rejected.status == 201
    assert rejected.body["verdict"]["outcome"] == "rejected"
    assert rejected.body["verdict"]["rejections"][0]["code"] == "excerpt_not_found"
    thread = site.client().get(f"{LEAF}/reject-1/messages", auth=False).body["messages"]
    assert thread[0]["body"].startswith("REJECTED") and thread[0]["data"]["reason_code"] == "excerpt_not_found"
    # One more acceptance by the same operator brings no second first-minute message.
    live_leaf(world.home, "accept-2")
    assert submit(site.a, creation(site, "accept-2", 13)).body["verdict"]["outcome"] == "accepted"
    assert len([m for m in site.a.get("/messages").body["messages"] if m["kind"] == "first_minute"]) == 1
    assert verify_ledger(world.repo, world.home.read_anchor(SLUG)).ok


def test_another_agents_identity_is_refused(site: Site) -> None:
    world = site.world
    live_leaf(world.home, "theirs-1")
    mine = submit(site.a, creation(site, "theirs-1", 16))
    assert site.b.get(f"/submissions/{mine.body['submission_id']}").error_code == "no_submission"
    live_leaf(world.home, "impostor-1")
    # agent-b sends a bundle whose manifest says it is agent-a's work.
    impostor = creation(site, "impostor-1", 19)
    reply = site.b.submit(SLUG, "impostor-1", impostor.bundle, impostor.patch)
    assert reply.status == 403 and reply.body["verdict"]["rejections"][0]["code"] == "actor_mismatch"
    claim = site.b.post_json(f"{LEAF}/impostor-1/claim", {"agent": "agent-a"})
    assert (claim.status, claim.error_code) == (403, "actor_mismatch")
    post = site.b.post_json(f"{LEAF}/impostor-1/messages", {"body": "hello", "agent": "agent-a"})
    assert post.status == 403


def test_retry_with_the_same_idempotency_key_submits_once(site: Site) -> None:
    world = site.world
    live_leaf(world.home, "retry-1")
    submission = creation(site, "retry-1", 22)
    first = submit(site.a, submission, key="retry-key-0001")
    again = submit(site.a, submission, key="retry-key-0001")
    assert first.status == 201 and again.status == 200 and again.headers["idempotent-replayed"] == "true"
    assert again.body == first.body
    trace_id = first.body["verdict"]["trace_id"]
    assert len([row for row in site.rows() if row.trace_id == trace_id]) == 1
    other = creation(site, "retry-1", 25)
    assert submit(site.a, other, key="retry-key-0001").error_code == "idempotency_key_reused"


def test_header_and_body_time_limits(site: Site) -> None:
    port = site.server.port
    started = time.monotonic()
    slow_head = raw_request(port, b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n", read_timeout=10)
    assert time.monotonic() - started < 8 and not slow_head.startswith(b"HTTP/1.1 200")
    live_leaf(site.world.home, "slow-1")
    started = time.monotonic()
    slow_body = raw_request(port, (f"POST {LEAF}/slow-1/claim HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                   f"Authorization: Bearer {site.world.agent.token}\r\n"
                                   "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{").encode())
    assert slow_body.startswith(b"HTTP/1.1 408") and b"body_timeout" in slow_body
    assert time.monotonic() - started < 8


def test_two_submissions_on_one_base(site: Site) -> None:
    world = site.world
    for leaf_id in ("base-1", "base-2", "base-3", "base-4"):
        live_leaf(world.home, leaf_id)
    base = world.tip()
    # Made against the same revision; the second to land lands on the new tip, paths being disjoint.
    disjoint = [site.world.creation(leaf, distinct_findings(world.agent, leaf, first), base=base)
                for leaf, first in (("base-1", 30), ("base-2", 33))]
    # These two create the same finding file: one lands, the other is stale (never merged).
    same = [site.world.creation(leaf, distinct_findings(world.agent, leaf, 36), base=base)
            for leaf in ("base-3", "base-4")]
    replies: dict[str, Reply] = {}

    def go(submission: Submission) -> None:
        replies[submission.leaf_id or ""] = submit(site.client(world.agent.token), submission)

    threads = [threading.Thread(target=go, args=(s,)) for s in disjoint + same]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert [replies[leaf].body["verdict"]["outcome"] for leaf in ("base-1", "base-2")] == ["accepted", "accepted"]
    outcomes = sorted(replies[leaf].body["verdict"]["outcome"] for leaf in ("base-3", "base-4"))
    assert outcomes == ["accepted", "rejected"]
    loser = next(replies[leaf].body["verdict"] for leaf in ("base-3", "base-4")
                 if replies[leaf].body["verdict"]["outcome"] == "rejected")
    assert loser["rejections"][0]["code"] == "stale"
    assert verify_ledger(world.repo, world.home.read_anchor(SLUG)).ok


def test_cli_as_a_client(site: Site, tmp_path: Path) -> None:
    world = site.world
    live_leaf(world.home, "cli-1")
    submission = creation(site, "cli-1", 40)
    (tmp_path / "patch.diff").write_bytes(submission.patch)
    trace = tmp_path / "trace"
    trace.mkdir()
    for name, data in submission.bundle.items():
        (trace / name).write_bytes(data)
    env = {**os.environ, "RW_TOKEN": world.agent.token, "RW_HOME": str(tmp_path / "not-the-home")}

    def rw(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([RW, *args], check=False, env=env, capture_output=True, text=True, timeout=60)

    done = rw("claim", SLUG, "cli-1", "--server", site.server.url)
    assert done.returncode == 0 and "claimed" in done.stdout, done.stderr
    result = rw("submit", SLUG, "--leaf", "cli-1", "--patch", str(tmp_path / "patch.diff"), "--trace", str(trace),
                "--server", site.server.url)
    assert result.returncode == 0 and result.stdout.startswith("ACCEPTED"), result.stdout + result.stderr
    again = rw("submit", SLUG, "--leaf", "cli-1", "--patch", str(tmp_path / "patch.diff"), "--trace", str(trace),
               "--server", site.server.url, "--json")
    assert again.returncode == 1 and json.loads(again.stdout)["rejections"][0]["code"] == "leaf_closed"
    board = rw("board", SLUG, "--server", site.server.url, "--state", "accepted")
    assert "cli-1" in board.stdout
    inbox = rw("messages", "--server", site.server.url, "--json")
    assert inbox.returncode == 0 and json.loads(inbox.stdout)["agent"] == "agent-a"
    bad = rw("messages", "--server", f"http://user:{world.agent.token}@127.0.0.1:{site.server.port}")
    assert bad.returncode == 2 and "credentials" in bad.stderr
    remote = rw("messages", "--server", "http://192.0.2.1:8765")
    assert remote.returncode == 2 and "clear-text" in remote.stderr
    no_token = subprocess.run([RW, "messages", "--server", site.server.url], check=False, capture_output=True,
                              text=True,
                              env={k: v for k, v in env.items() if k != "RW_TOKEN"}, timeout=60)
    assert no_token.returncode == 3


def test_questions_on_a_leaf_thread(site: Site) -> None:
    live_leaf(site.world.home, "ask-1")
    posted = site.a.post_json(f"{LEAF}/ask-1/messages", {"body": "Is the 2025 figure in scope?"})
    assert posted.status == 201 and posted.body["from"] == "agent-a" and posted.body["kind"] == "question"
    thread = site.client().get(f"{LEAF}/ask-1/messages", auth=False).body["messages"]
    assert [m["id"] for m in thread] == [posted.body["id"]]
    assert site.a.post_json(f"{LEAF}/ask-1/messages", {"body": "   "}).error_code == "invalid_body"
    assert site.a.post_json(f"{LEAF}/no-such-leaf/messages", {"body": "hello"}).error_code == "no_leaf"
