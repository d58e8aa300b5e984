"""The project over git's smart HTTP (`git http-backend` behind the service's guard): anyone may
clone and fetch; only a person's token may push, and only into a repository whose pre-receive
hook verifies the push, which sees the pusher's token as RW_PUSH_TOKEN."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.service_harness import Server, raw_request, start
from tests.support.world import FIXTURES, NOW, SLUG, make_home
from verifier.store.home import Home
from verifier.writes.project import init_project

pytestmark = pytest.mark.slow  # a real `rw serve` on loopback


@dataclass
class Site:
    home: Home
    server: Server
    agent_token: str
    person_token: str


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    home = make_home(tmp_path_factory.mktemp("githttp") / "home")
    init_project(home, SLUG, now=NOW, template=FIXTURES / "demo-project")
    agent = home.identities.add("pusher-agent", "op-a", "agent", NOW)
    person = home.identities.add("steward", "steward", "human", NOW)
    server = start(home.root)
    yield Site(home, server, agent, person)
    server.stop()


def git(cwd: Path, *args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"}
    auth = ["-c", f"http.extraHeader=Authorization: Bearer {token}"] if token else []
    return subprocess.run(["git", *auth, *args], cwd=cwd, env=env, capture_output=True, text=True, check=False,
                          timeout=60)


def clone(site: Site, dest: Path) -> Path:
    done = git(dest.parent, "clone", "--quiet", f"{site.server.url}/projects/{SLUG}.git", dest.name)
    assert done.returncode == 0, done.stderr
    return dest


def commit_something(work: Path, name: str = "NOTES.md") -> None:
    (work / name).write_text("a person's note\n")
    assert git(work, "add", name).returncode == 0
    done = git(work, "-c", "user.name=S", "-c", "user.email=s@example.org", "commit", "--quiet", "-m", "note")
    assert done.returncode == 0, done.stderr


def test_anyone_can_clone_and_fetch_the_tip(site: Site, tmp_path: Path) -> None:
    work = clone(site, tmp_path / "clone")
    assert (work / "PROJECT.md").exists()
    head = git(work, "rev-parse", "HEAD").stdout.strip()
    assert head == site.home.project(SLUG).tip()
    assert git(work, "fetch", "--quiet").returncode == 0


def test_landings_staged_for_a_git_host_are_never_advertised(site: Site, tmp_path: Path) -> None:
    repo = site.home.project(SLUG)
    tip = repo.tip()
    assert tip is not None
    repo.move_staged(tip, repo.staged())  # as a project on a git host has, between its pushes
    listed = git(tmp_path, "ls-remote", f"{site.server.url}/projects/{SLUG}.git")
    assert listed.returncode == 0, listed.stderr
    assert "refs/heads/main" in listed.stdout and "refs/rw/" not in listed.stdout


def test_agents_never_push_and_strangers_are_told_how_to_push_over_http(site: Site, tmp_path: Path) -> None:
    work = clone(site, tmp_path / "clone")
    commit_something(work)
    tip = site.home.project(SLUG).tip()
    anonymous = git(work, "push", "origin", "HEAD:refs/for/main")
    assert anonymous.returncode != 0 and "remote: REFUSED: [no_token] the push carried no token" in anonymous.stderr
    assert "`rw git setup`" in anonymous.stderr  # the form for this transport
    agent = git(work, "push", "origin", "HEAD:main", token=site.agent_token)
    assert agent.returncode != 0 and "remote: [push_forbidden] agents do not push" in agent.stderr
    person = git(work, "push", "origin", "HEAD:main", token=site.person_token)
    assert person.returncode != 0 and "direct pushes are refused" in person.stderr  # the writer's hook
    assert site.home.project(SLUG).tip() == tip


def test_a_persons_push_to_refs_for_main_over_http_lands_through_the_writer(site: Site, tmp_path: Path) -> None:
    work = clone(site, tmp_path / "clone")
    commit_something(work, "PUSHED-NOTES.md")
    tip = site.home.project(SLUG).tip()
    pushed = git(work, "push", "origin", "HEAD:refs/for/main", token=site.person_token)
    assert pushed.returncode == 0 and "remote: ACCEPTED" in pushed.stderr, pushed.stderr
    landed = site.home.project(SLUG)
    assert landed.tip() != tip and landed.view(landed.tip()).read("PUSHED-NOTES.md") == b"a person's note\n"
    assert landed.repo.references.get("refs/for/main") is None


def test_a_persons_push_reaches_the_hook_with_their_token(site: Site, tmp_path: Path) -> None:
    hook = site.home.repo_path(SLUG) / "hooks" / "pre-receive"
    writers_hook = hook.read_bytes()
    seen = tmp_path / "seen-token"
    hook.write_text(f"#!/bin/sh\nprintf '%s' \"$RW_PUSH_TOKEN\" > {seen}\necho refused by the test hook >&2\nexit 1\n")
    hook.chmod(0o755)
    try:
        work = clone(site, tmp_path / "clone")
        commit_something(work)
        pushed = git(work, "push", "origin", "HEAD:main", token=site.person_token)
    finally:
        hook.write_bytes(writers_hook)  # the writer's hook back, for whatever runs next
    assert pushed.returncode != 0 and "refused by the test hook" in pushed.stderr
    assert seen.read_text() == site.person_token


@pytest.mark.parametrize("path", [
    f"/projects/{SLUG}.git/HEAD",  # the dumb protocol's files are not served
    f"/projects/{SLUG}.git/info/refs",  # nor is info/refs without a smart service
    f"/projects/{SLUG}.git/objects/info/packs",
    "/projects/no-such-project.git/info/refs?service=git-upload-pack",
])
def test_only_the_smart_protocol_of_existing_projects(site: Site, path: str) -> None:
    answer = raw_request(site.server.port, f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                         .encode())
    assert answer.startswith(b"HTTP/1.1 404"), answer[:200]


def test_the_guard_still_refuses_a_token_in_the_url(site: Site) -> None:
    path = f"/projects/{SLUG}.git/info/refs?service=git-upload-pack&token=abc"
    answer = raw_request(site.server.port, f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                         .encode())
    assert answer.startswith(b"HTTP/1.1 400") and b"token_in_url" in answer


def test_a_malformed_request_is_gits_to_answer_and_the_service_stays_up(site: Site, tmp_path: Path) -> None:
    path = f"/projects/{SLUG}.git/git-upload-pack"
    for body in (b"garbage", b"0000", b""):
        head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-git-upload-pack-request\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
        answer = raw_request(site.server.port, head + body)
        assert answer.startswith(b"HTTP/1.1 200"), answer[:200]  # git's own protocol error, in git's answer
    head_only = raw_request(site.server.port, f"HEAD /projects/{SLUG}.git/info/refs?service=git-upload-pack HTTP/1.1"
                            "\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
    assert head_only.startswith(b"HTTP/1.1 200")
    clone(site, tmp_path / "still-works")
    assert "internal error" not in site.server.output()
