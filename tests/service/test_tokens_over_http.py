"""Tokens and invites over a real `rw serve` on loopback: list, revoke and rotate (yours and your
agents', the admin any), expiry and revocation answered 401 on the API and the git endpoint, scope
refusals, invites made by the steward only, and `rw join` from a second machine that has only the
URL and the code, then `rw git setup` and real pushes to refs/for/main over HTTP."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest

from tests.support.elsewhere import clone_and_commit, elsewhere_env, get_status, git, rw
from tests.support.service_harness import Server, live_leaf, start
from tests.support.world import FIXTURES, NOW, SLUG, make_home
from verifier.store.audit import read_denials
from verifier.store.home import Home
from verifier.store.identities import Grant
from verifier.writes.project import init_project

pytestmark = pytest.mark.slow  # a real `rw serve` on loopback, real rw and git processes

STEWARD = "ericxtang"  # PROJECT.md's steward in the demo project


@dataclass
class Site:
    home: Home
    server: Server
    steward: str
    alice: str
    alice_bot: str
    bob: str
    admin: str

    @property
    def repo_url(self) -> str:
        return f"{self.server.url}/projects/{SLUG}.git"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    home = make_home(tmp_path_factory.mktemp("tokens") / "home")
    init_project(home, SLUG, now=NOW, template=FIXTURES / "demo-project")
    ids = home.identities
    tokens = (ids.add(STEWARD, STEWARD, "human", NOW), ids.add("alice", "alice", "human", NOW),
              ids.add("alice-bot", "alice", "agent", NOW), ids.add("bob", "bob", "human", NOW),
              ids.add("root", "root", "human", NOW, Grant(admin=True)))
    server = start(home.root)
    yield Site(home, server, *tokens)
    server.stop()


def handles(reply_body: dict[str, list[dict[str, str]]]) -> set[str]:
    return {token["handle"] for token in reply_body["tokens"]}


def test_a_person_lists_their_own_and_their_agents_tokens_and_the_admin_lists_all(site: Site) -> None:
    mine = site.server.client(site.alice).get("/tokens")
    assert mine.status == 200 and handles(mine.body) == {"alice", "alice-bot"}
    assert "token_sha256" not in str(mine.body) and "rwt_" not in str(mine.body)
    everyone = site.server.client(site.admin).get("/tokens")
    assert {"alice", "alice-bot", "bob", "root", STEWARD} <= handles(everyone.body)


def test_a_person_cannot_revoke_or_rotate_another_persons_token(site: Site) -> None:
    for action in ("revoke", "rotate"):
        refused = site.server.client(site.alice).post_json(f"/tokens/bob/{action}", {})
        assert (refused.status, refused.error_code) == (403, "not_your_token")
    assert site.server.client(site.bob).get("/whoami").status == 200  # bob's token still works


def test_a_revoked_token_gets_401_on_the_api_and_the_git_endpoint_at_once(site: Site) -> None:
    token = site.home.identities.add("carl-bot", "alice", "agent", NOW)
    assert site.server.client(token).get("/whoami").status == 200
    revoked = site.server.client(site.alice).post_json("/tokens/carl-bot/revoke", {"reason": "laptop lost"})
    assert revoked.status == 200 and revoked.body["token"]["state"] == "revoked"
    assert site.server.client(token).get("/whoami").status == 401
    status, _text = get_status(site.server.port, f"/projects/{SLUG}.git/info/refs?service=git-receive-pack", token)
    assert status == 401


def test_the_admin_rotates_any_token_and_the_old_one_gets_401(site: Site) -> None:
    old = site.home.identities.add("dora", "dora", "human", NOW)
    rotated = site.server.client(site.admin).post_json("/tokens/dora/rotate", {"expires_s": 86400})
    assert rotated.status == 200 and rotated.body["token"] != old
    assert site.server.client(old).get("/whoami").status == 401
    assert site.server.client(rotated.body["token"]).get("/whoami").body["agent"] == "dora"


def test_an_expired_token_gets_401_on_the_api_and_the_git_endpoint(site: Site, tmp_path: Path) -> None:
    long_ago = NOW - timedelta(days=30)
    token = site.home.identities.add("old-eve", "old-eve", "human", long_ago, Grant(expires_in=timedelta(days=1)))
    answer = site.server.client(token).get("/whoami")
    assert (answer.status, answer.error_code) == (401, "token_expired")
    status, text = get_status(site.server.port, f"/projects/{SLUG}.git/info/refs?service=git-receive-pack", token)
    assert status == 401 and "token_expired" in text
    recorded = [denial for denial in read_denials(site.home, None) if "[token_expired]" in denial.why]
    assert {denial.action for denial in recorded} >= {"GET /whoami", "git push"}
    assert token not in site.home.layout.audit_log.read_text()
    work = clone_and_commit(site.repo_url, tmp_path / "clone", "EXPIRED.md")
    tip = site.home.project(SLUG).tip()
    pushed = git(work, "push", "origin", "HEAD:refs/for/main", token=token)
    assert pushed.returncode != 0 and site.home.project(SLUG).tip() == tip


def test_a_token_outside_its_project_or_its_kinds_of_action_is_refused_with_token_scope(site: Site) -> None:
    live_leaf(site.home, "scope-1")
    elsewhere = site.home.identities.add("far-bot", "alice", "agent", NOW, Grant(projects=("another-project",)))
    reader = site.home.identities.add("read-bot", "alice", "agent", NOW, Grant(scopes=("read",)))
    for token in (elsewhere, reader):
        refused = site.server.client(token).post_json(f"/projects/{SLUG}/leaves/scope-1/claim", {})
        assert (refused.status, refused.error_code) == (403, "token_scope")
    assert site.server.client(reader).get("/whoami").status == 200  # reading is within its scope
    assert site.server.client(site.alice_bot).post_json(f"/projects/{SLUG}/leaves/scope-1/claim", {}).status == 200


def test_only_the_steward_or_an_admin_makes_an_invite(site: Site) -> None:
    body = {"operator": "frank", "agents": 1}
    refused = site.server.client(site.alice).post_json(f"/projects/{SLUG}/invites", body)
    assert (refused.status, refused.error_code) == (403, "not_authorised")  # the authority rule's `invite` row
    assert "steward" in refused.body["error"]["message"]
    refused = site.server.client(site.alice_bot).post_json(f"/projects/{SLUG}/invites", body)
    assert refused.status == 403 and refused.error_code in ("not_authorised", "token_scope")
    made = site.server.client(site.steward).post_json(f"/projects/{SLUG}/invites", body)
    assert made.status == 201 and made.body["code"].startswith("rwi_")
    assert site.server.client(site.admin).post_json(f"/projects/{SLUG}/invites", {"operator": "gina"}).status == 201


def test_an_invite_is_redeemed_once_over_http(site: Site) -> None:
    code = site.server.client(site.steward).post_json(f"/projects/{SLUG}/invites",
                                                      {"operator": "hank", "agents": 1}).body["code"]
    first = site.server.client().post_json("/join", {"code": code, "agents": ["hank-bot"]})
    assert first.status == 201 and set(first.body["agents"]) == {"hank-bot"} and first.body["person_token"]
    again = site.server.client().post_json("/join", {"code": code})
    assert (again.status, again.error_code) == (401, "bad_invite")
    hostile = site.server.client().post_json("/join", {"code": code, "admin": True})
    assert (hostile.status, hostile.error_code) == (422, "invalid_body")


def test_rw_join_from_a_second_machine_with_only_the_url_and_the_code(site: Site, tmp_path: Path) -> None:
    invite = rw("invite", SLUG, "--operator", "ivy", "--agents", "2", "--expires", "7d",
                env={**elsewhere_env(tmp_path / "steward"), "RW_SERVER": site.server.url, "RW_TOKEN": site.steward})
    assert invite.returncode == 0, invite.stderr
    code = invite.stdout.strip()
    env = elsewhere_env(tmp_path / "ivy")
    joined = rw("join", site.server.url, code, "--agent", "ivy-laptop", env=env)
    assert joined.returncode == 0, joined.stderr
    assert "ivy-laptop" in joined.stdout and "rwt_" not in joined.stdout + joined.stderr
    config = tmp_path / "ivy" / "rw" / "client.json"
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    listed = rw("token", "list", "--json", env=env)  # server and token found in the client config
    assert listed.returncode == 0, listed.stderr
    assert {"ivy", "ivy-laptop", "ivy-agent-1"} <= {t["handle"] for t in json.loads(listed.stdout)["tokens"]}
    agent = site.home.identities.get("ivy-laptop")
    assert agent is not None and agent.operator == "ivy" and agent.projects == (SLUG,)
    twice = rw("join", site.server.url, code, env=elsewhere_env(tmp_path / "thief"))
    assert twice.returncode == 3 and "bad_invite" in twice.stderr


def test_rw_git_setup_then_a_plain_git_push_over_http_lands_on_main(site: Site, tmp_path: Path) -> None:
    env = elsewhere_env(tmp_path / "alice", RW_TOKEN=site.alice)
    work = clone_and_commit(site.repo_url, tmp_path / "clone", "SETUP-NOTES.md", env=env)
    setup = rw("git", "setup", env=env, cwd=work)
    assert setup.returncode == 0, setup.stderr
    assert site.alice not in setup.stdout + setup.stderr and "warning" not in setup.stderr
    bot = rw("git", "setup", env={**env, "RW_TOKEN": site.alice_bot}, cwd=work)  # an agent's: said at once
    assert bot.returncode == 0 and "an agent's: agents do not push" in bot.stderr, bot.stderr
    setup = rw("git", "setup", env=env, cwd=work)  # the person's again
    assert stat.S_IMODE((work / ".git" / "config").stat().st_mode) == 0o600
    pushed = git(work, "push", "origin", "HEAD:refs/for/main", env={**env, "RW_TOKEN": ""})
    assert pushed.returncode == 0 and "remote: ACCEPTED" in pushed.stderr, pushed.stderr
    landed = site.home.project(SLUG)
    assert landed.view(landed.tip()).read("SETUP-NOTES.md") == b"a person's note in SETUP-NOTES.md\n"


def test_the_readmes_push_with_a_token_option_works_over_http(site: Site, tmp_path: Path) -> None:
    work = clone_and_commit(site.repo_url, tmp_path / "clone", "OPTION-NOTES.md")
    pushed = git(work, "push", "-o", f"token={site.alice}", "origin", "HEAD:refs/for/main")
    assert pushed.returncode == 0 and "remote: ACCEPTED" in pushed.stderr, pushed.stderr


def test_a_refused_push_over_http_shows_the_reason_on_gits_terminal(site: Site, tmp_path: Path) -> None:
    other = site.home.identities.add("jo", "jo", "human", NOW, Grant(projects=("another-project",)))
    work = clone_and_commit(site.repo_url, tmp_path / "clone", "REFUSED.md")
    tip = site.home.project(SLUG).tip()
    by_header = git(work, "push", "origin", "HEAD:refs/for/main", token=other)
    assert by_header.returncode != 0 and "remote: [token_scope]" in by_header.stderr, by_header.stderr
    by_option = git(work, "push", "-o", f"token={other}", "origin", "HEAD:refs/for/main")
    assert by_option.returncode != 0 and "remote: REFUSED: [token_scope]" in by_option.stderr, by_option.stderr
    agent = git(work, "push", "origin", "HEAD:refs/for/main", token=site.alice_bot)
    assert "remote: [push_forbidden] agents do not push" in agent.stderr
    assert site.home.project(SLUG).tip() == tip
