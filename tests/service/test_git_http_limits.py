"""Git over HTTP under the API's limits, per direction, and serving only what the refs it lists
reach: a stalled upload-pack or receive-pack body is 408 after the body idle timeout, a body over
its cap 413 at once, and a `want` of an unreachable object or of a commit only a hidden ref
(refs/rw/) reaches is 403 `unadvertised_object`, in protocol v2 as in v0, from a real git client
as from raw requests. Each refusal leaves the refs and the ledger as they were."""

from __future__ import annotations

import gzip
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.git import clone, commit_file, push_for_review
from tests.support.git import git as plain_git
from tests.support.service_harness import Server, raw_request, start
from tests.support.world import FIXTURES, NOW, SLUG, make_home
from verifier.constants import MAX_RECEIVE_REQUEST, MAX_UPLOAD_REQUEST
from verifier.pipeline.ledger import read_chain
from verifier.service.githttp import wanted_ids
from verifier.store.home import Home
from verifier.writes.project import init_project

# Real `rw` processes, a real service or real git pushes: end to end, so in the slow set.
pytestmark = pytest.mark.slow

IDLE_S = 1


@dataclass
class Site:
    home: Home
    server: Server
    person_token: str
    old: str  # a commit on main below its tip
    hidden: str  # a commit only refs/rw/staged reaches
    loose_blob: str  # an object no ref reaches


def pkt(text: str) -> bytes:
    data = text.encode()
    return f"{len(data) + 4:04x}".encode() + data


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    home = make_home(tmp_path_factory.mktemp("githttp-limits") / "home")
    init_project(home, SLUG, now=NOW, template=FIXTURES / "demo-project")
    person = home.identities.add("steward", "steward", "human", NOW)
    bare = home.repo_path(SLUG)
    old = plain_git(bare, "rev-parse", "main").stdout.strip()
    work = clone(bare, bare.parent.parent / "work")  # a person's push, so main has history below its tip
    commit_file(work, "notes/one.md", "# one\n", "a note")
    assert push_for_review(work, person).returncode == 0
    staged_blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=bare, input="staged\n",
                                 capture_output=True, text=True, check=True).stdout.strip()
    tree = subprocess.run(["git", "mktree"], cwd=bare, input=f"100644 blob {staged_blob}\tstaged.md\n",
                          capture_output=True, text=True, check=True).stdout.strip()
    hidden = plain_git(bare, "commit-tree", tree, "-p", "main", "-m", "staged for the host").stdout.strip()
    plain_git(bare, "update-ref", "refs/rw/staged", hidden)
    loose = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=bare, input="unreachable\n",
                           capture_output=True, text=True, check=True).stdout.strip()
    server = start(home.root, "--body-idle-timeout", str(IDLE_S))
    yield Site(home, server, person, old, hidden, loose)
    server.stop()


def snapshot(site: Site) -> tuple[list[str], int]:
    bare = site.home.repo_path(SLUG)
    refs = plain_git(bare, "for-each-ref", "--format=%(refname) %(objectname)").stdout.splitlines()
    repo = site.home.project(SLUG)
    return refs, len(list(read_chain(repo.view(repo.tip()))))


def client_git(cwd: Path, *args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd)}
    auth = ["-c", f"http.extraHeader=Authorization: Bearer {token}"] if token else []
    return subprocess.run(["git", *auth, *args], cwd=cwd, env=env, capture_output=True, text=True, check=False,
                          timeout=60)


def stalled(port: int, head: bytes, first: bytes) -> tuple[bytes, float]:
    """Send a head promising more body than `first`, then nothing: (the answer, seconds waited)."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head + first)
        answer = b""
        while b"\r\n\r\n" not in answer or b"body_timeout" not in answer:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    return answer, time.monotonic() - started


def post_head(path: str, length: int, kind: str, extra: str = "") -> bytes:
    return (f"POST /projects/{SLUG}.git/{path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Type: application/x-{kind}-request\r\nContent-Length: {length}\r\n{extra}"
            "Connection: close\r\n\r\n").encode()


def test_a_stalled_upload_pack_body_is_refused_after_the_idle_timeout(site: Site) -> None:
    before = snapshot(site)
    answer, waited = stalled(site.server.port, post_head("git-upload-pack", 1000, "git-upload-pack"), b"0032want ")
    assert answer.startswith(b"HTTP/1.1 408") and b"body_timeout" in answer and b"stalled" in answer, answer[:300]
    assert waited >= IDLE_S
    assert snapshot(site) == before


def test_a_stalled_receive_pack_body_is_refused_after_the_idle_timeout(site: Site) -> None:
    before = snapshot(site)
    head = post_head("git-receive-pack", 100_000, "git-receive-pack",
                     f"Authorization: Bearer {site.person_token}\r\n")
    answer, waited = stalled(site.server.port, head, b"00a0")
    assert answer.startswith(b"HTTP/1.1 408") and b"body_timeout" in answer and b"stalled" in answer, answer[:300]
    assert waited >= IDLE_S
    assert snapshot(site) == before


@pytest.mark.parametrize(("path", "cap"), [("git-upload-pack", MAX_UPLOAD_REQUEST),
                                           ("git-receive-pack", MAX_RECEIVE_REQUEST)])
def test_a_git_body_over_its_cap_is_refused_at_once(site: Site, path: str, cap: int) -> None:
    before = snapshot(site)
    head = post_head(path, cap + 1, path, f"Authorization: Bearer {site.person_token}\r\n")
    answer = raw_request(site.server.port, head)
    assert answer.startswith(b"HTTP/1.1 413") and b"too_large" in answer, answer[:300]
    assert snapshot(site) == before


def v2_fetch(want: str) -> bytes:
    return pkt("command=fetch\n") + pkt("agent=git/test\n") + b"0001" + pkt("ofs-delta\n") + pkt(
        f"want {want}\n") + pkt("done\n") + b"0000"


def v0_fetch(want: str) -> bytes:
    return pkt(f"want {want} side-band-64k ofs-delta\n") + b"0000" + pkt("done\n")


def upload_pack(site: Site, body: bytes, version: int) -> bytes:
    protocol = "Git-Protocol: version=2\r\n" if version == 2 else ""
    return raw_request(site.server.port, post_head("git-upload-pack", len(body), "git-upload-pack", protocol) + body)


@pytest.mark.parametrize("version", [0, 2])
@pytest.mark.parametrize("what", ["loose_blob", "hidden"])
def test_a_want_of_what_no_listed_ref_reaches_is_refused(site: Site, version: int, what: str) -> None:
    before = snapshot(site)
    want = getattr(site, what)
    answer = upload_pack(site, (v2_fetch if version == 2 else v0_fetch)(want), version)
    assert answer.startswith(b"HTTP/1.1 403") and b"unadvertised_object" in answer, answer[:300]
    assert b"PACK" not in answer
    assert snapshot(site) == before


@pytest.mark.parametrize("version", [0, 2])
def test_a_want_of_the_tip_or_its_history_is_served(site: Site, version: int) -> None:
    tip = site.home.project(SLUG).tip()
    assert tip is not None
    for want in (tip, site.old):
        answer = upload_pack(site, (v2_fetch if version == 2 else v0_fetch)(want), version)
        assert answer.startswith(b"HTTP/1.1 200") and b"PACK" in answer, answer[:300]


def test_a_v2_client_fetches_history_by_id_but_not_a_hidden_commit(site: Site, tmp_path: Path) -> None:
    work = tmp_path / "work"
    cloned = client_git(tmp_path, "-c", "protocol.version=2", "clone", "-q",
                        f"{site.server.url}/projects/{SLUG}.git", "work")
    assert cloned.returncode == 0, cloned.stderr
    fine = client_git(work, "-c", "protocol.version=2", "fetch", "-q", "origin", site.old)
    assert fine.returncode == 0, fine.stderr
    for refused in (site.hidden, site.loose_blob):
        done = client_git(work, "-c", "protocol.version=2", "fetch", "-q", "origin", refused)
        assert done.returncode != 0 and "403" in done.stderr, done.stderr
    assert client_git(work, "cat-file", "-e", site.hidden).returncode != 0
    listed = client_git(work, "ls-remote", "origin")
    assert "refs/rw/" not in listed.stdout and site.hidden not in listed.stdout


def test_the_wants_of_a_request_are_read_in_both_protocols_and_gzip() -> None:
    one, two = "a" * 40, "b" * 40
    body = v0_fetch(one) + pkt(f"want {two}\n")
    assert wanted_ids(body, None) == [one, two]
    assert wanted_ids(v2_fetch(two), None) == [two]
    assert wanted_ids(gzip.compress(body), "gzip") == [one, two]
    assert wanted_ids(b"garbage", None) == []
