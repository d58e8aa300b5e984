"""The identity registry's tokens and invites on a real file: expiry, revoke, rotate, scopes, who
manages whose token, and invites that work once and until they expire. Only hashes at rest."""

from __future__ import annotations

import stat
from datetime import timedelta
from pathlib import Path

import pytest

from tests.support.world import NOW
from verifier.errors import AuthError, ConflictError, FormatError, ScopeError
from verifier.store.identities import FileIdentities, Grant, may_manage, require, token_hash, token_valid


@pytest.fixture
def registry(tmp_path: Path) -> FileIdentities:
    return FileIdentities(tmp_path / "identities.json")


def test_a_token_expires_after_its_lifetime_and_is_refused_with_token_expired(registry: FileIdentities) -> None:
    token = registry.add("agent-x", "op-x", "agent", NOW, Grant(expires_in=timedelta(days=2)))
    assert registry.authenticate(token, NOW + timedelta(days=1)).handle == "agent-x"
    with pytest.raises(AuthError) as refused:
        registry.authenticate(token, NOW + timedelta(days=2))
    assert refused.value.code == "token_expired" and refused.value.http_status == 401
    assert "rw token rotate agent-x" in str(refused.value)
    assert token_valid(registry, token, NOW + timedelta(days=3)) is None


def test_the_default_lifetime_is_ninety_days(registry: FileIdentities) -> None:
    token = registry.add("alice", "alice", "human", NOW)
    assert registry.authenticate(token, NOW + timedelta(days=89)).handle == "alice"
    assert token_valid(registry, token, NOW + timedelta(days=90)) is None
    assert registry.tokens(NOW)[0].expires_at == "2027-02-28T12:00:00Z"


def test_a_revoked_token_authenticates_nowhere_and_rotation_gives_a_working_one(registry: FileIdentities) -> None:
    token = registry.add("agent-x", "op-x", "agent", NOW)
    info = registry.revoke("agent-x", NOW, "lost laptop")
    assert (info.state, info.revoked_because) == ("revoked", "lost laptop")
    with pytest.raises(AuthError, match="unknown or revoked"):
        registry.authenticate(token, NOW)
    new = registry.rotate("agent-x", NOW, timedelta(days=10))
    assert new != token and registry.authenticate(new, NOW).handle == "agent-x"
    assert token_valid(registry, token, NOW) is None  # the old one stays dead
    assert registry.tokens(NOW)[0].state == "live"


def test_rotation_kills_the_old_token_and_keeps_scopes_and_projects(registry: FileIdentities) -> None:
    old = registry.add("agent-x", "op-x", "agent", NOW, Grant(projects=("p-one",), scopes=("read",)))
    new = registry.rotate("agent-x", NOW)
    assert token_valid(registry, old, NOW) is None
    actor = registry.authenticate(new, NOW)
    assert actor.projects == ("p-one",) and actor.granted == frozenset({"read"})


def test_a_token_is_refused_outside_its_projects_and_its_kinds_of_action(registry: FileIdentities) -> None:
    reader = registry.authenticate(registry.add("ro", "op", "agent", NOW, Grant(scopes=("read",))), NOW)
    with pytest.raises(ScopeError) as refused:
        require(reader, "leaf", "p-one")
    assert (refused.value.http_status, refused.value.code) == (403, "token_scope")
    scoped = registry.authenticate(registry.add("one", "op", "agent", NOW, Grant(projects=("p-one",))), NOW)
    require(scoped, "leaf", "p-one")
    with pytest.raises(ScopeError, match="for p-one, not p-two"):
        require(scoped, "leaf", "p-two")
    agent = registry.authenticate(registry.add("plain", "op", "agent", NOW), NOW)
    with pytest.raises(ScopeError):
        require(agent, "steward", "p-one")  # an agent's token is read and leaf work by default


def test_a_person_manages_their_own_and_their_agents_tokens_and_an_admin_any(registry: FileIdentities) -> None:
    alice = registry.authenticate(registry.add("alice", "alice", "human", NOW), NOW)
    registry.add("alice-bot", "alice", "agent", NOW)
    bob = registry.authenticate(registry.add("bob", "bob", "human", NOW), NOW)
    root = registry.authenticate(registry.add("root", "root", "human", NOW, Grant(admin=True)), NOW)
    infos = {info.handle: info for info in registry.tokens(NOW)}
    assert may_manage(alice, infos["alice"]) and may_manage(alice, infos["alice-bot"])
    assert not may_manage(bob, infos["alice"]) and not may_manage(bob, infos["alice-bot"])
    assert all(may_manage(root, info) for info in infos.values())


def test_an_invite_works_once_registers_the_operator_and_scopes_the_agents(registry: FileIdentities) -> None:
    _id, code = registry.invite("p-one", "carol", 2, NOW, "steward")
    joined = registry.join(code, ["carol-laptop"], NOW + timedelta(hours=1))
    assert joined.operator == "carol" and joined.person_token is not None
    assert sorted(joined.agents) == ["carol-agent-1", "carol-laptop"]
    person = registry.authenticate(joined.person_token, NOW)
    assert person.type == "human" and person.projects == ()
    agent = registry.authenticate(joined.agents["carol-laptop"], NOW)
    assert (agent.operator, agent.projects, agent.granted) == ("carol", ("p-one",), frozenset({"read", "leaf"}))
    with pytest.raises(AuthError, match="was used") as again:
        registry.join(code, [], NOW + timedelta(hours=2))
    assert again.value.code == "bad_invite"


def test_an_expired_or_unknown_invite_registers_nobody(registry: FileIdentities) -> None:
    _id, code = registry.invite("p-one", "dave", 1, NOW, "admin", timedelta(days=1))
    with pytest.raises(AuthError, match="expired"):
        registry.join(code, [], NOW + timedelta(days=1))
    with pytest.raises(AuthError, match="unknown invite"):
        registry.join("rwi_" + "A" * 43, [], NOW)
    assert registry.get("dave") is None and registry.tokens(NOW) == []


def test_a_join_with_a_taken_handle_lands_nothing_and_the_invite_stays_good(registry: FileIdentities) -> None:
    registry.add("taken", "someone", "agent", NOW)
    _id, code = registry.invite("p-one", "erin", 1, NOW, "admin")
    with pytest.raises(ConflictError, match="taken is already registered"):
        registry.join(code, ["taken"], NOW)
    assert registry.get("erin") is None
    assert sorted(registry.join(code, ["erin-bot"], NOW).agents) == ["erin-bot"]


def test_an_invite_holds_to_its_number_of_agents(registry: FileIdentities) -> None:
    _id, code = registry.invite("p-one", "fay", 1, NOW, "admin")
    with pytest.raises(FormatError, match="for 1 agent"):
        registry.join(code, ["a-one", "a-two"], NOW)


def test_only_hashes_are_kept_and_the_file_is_0600(registry: FileIdentities) -> None:
    token = registry.add("alice", "alice", "human", NOW)
    _id, code = registry.invite("p-one", "gus", 1, NOW, "alice")
    text = registry.path.read_text()
    assert token not in text and code not in text and "rwt_" not in text and "rwi_" not in text
    assert stat.S_IMODE(registry.path.stat().st_mode) == 0o600


def test_a_registry_written_before_tokens_expired_still_authenticates(tmp_path: Path) -> None:
    token = "rwt_" + "b" * 43
    path = tmp_path / "identities.json"
    path.write_text('{"actors": {"old-agent": {"operator": "op", "type": "agent", "token_sha256": "'
                    + token_hash(token) + '", "created_at": "2026-01-01T00:00:00Z"}}}')
    actor = FileIdentities(path).authenticate(token, NOW)
    assert actor.handle == "old-agent" and "leaf" in actor.granted and "steward" not in actor.granted
