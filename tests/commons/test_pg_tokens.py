"""Tokens and invites on the PostgreSQL Commons (a throwaway cluster): the same rules as the file
registry, expiry, revoke, rotate, scopes, and an invite used once across two instances."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from tests.support.servers import postgres_cluster
from tests.support.world import NOW
from verifier.commons.pgidentities import PgIdentities
from verifier.errors import AuthError, ConflictError
from verifier.store.identities import FileIdentities, Grant, token_valid

pytestmark = [pytest.mark.slow, pytest.mark.postgres]  # a throwaway PostgreSQL cluster


@pytest.fixture(scope="module")
def dsn() -> Iterator[str]:
    with postgres_cluster() as url:
        yield url


def registry(dsn: str) -> PgIdentities:
    return PgIdentities(dsn, shared=False)


def test_on_postgres_a_token_expires_rotates_and_revokes(dsn: str) -> None:
    ids = registry(dsn)
    try:
        token = ids.add("pg-bot", "pg-op", "agent", NOW, Grant(expires_in=timedelta(days=1), projects=("p-one",)))
        actor = ids.authenticate(token, NOW)
        assert actor.projects == ("p-one",) and actor.granted == frozenset({"read", "leaf"})
        with pytest.raises(AuthError) as late:
            ids.authenticate(token, NOW + timedelta(days=1))
        assert late.value.code == "token_expired"
        new = ids.rotate("pg-bot", NOW, timedelta(days=5))
        assert token_valid(ids, token, NOW) is None and ids.authenticate(new, NOW).projects == ("p-one",)
        assert ids.revoke("pg-bot", NOW, "lost").state == "revoked"
        assert token_valid(ids, new, NOW) is None
        assert [info.state for info in ids.tokens(NOW) if info.handle == "pg-bot"] == ["revoked"]
    finally:
        ids.close()


def test_on_postgres_an_invite_is_used_once_across_instances(dsn: str) -> None:
    one, two = registry(dsn), registry(dsn)
    try:
        _id, code = one.invite("p-one", "pg-ivy", 1, NOW, "admin")
        joined = two.join(code, ["pg-ivy-bot"], NOW)
        assert joined.person_token is not None and one.authenticate(joined.agents["pg-ivy-bot"], NOW).projects == (
            "p-one",)
        with pytest.raises(AuthError, match="was used"):
            one.join(code, [], NOW)
        _id, taken = one.invite("p-one", "pg-jay", 1, NOW, "admin")
        with pytest.raises(ConflictError):
            one.join(taken, ["pg-ivy-bot"], NOW)  # a taken handle: nothing registered
        assert one.get("pg-jay") is None
    finally:
        one.close()
        two.close()


def test_a_file_registry_with_grants_is_copied_into_postgres_as_it_was(tmp_path: Path) -> None:
    seed = FileIdentities(tmp_path / "identities.json")
    token = seed.add("seed-admin", "seed-admin", "human", NOW, Grant(admin=True, scopes=("read",)))
    with postgres_cluster() as url:
        ids = PgIdentities(url, seed=seed.path, shared=False)
        try:
            actor = ids.authenticate(token, NOW)
            assert actor.admin and actor.granted == frozenset({"read"})
        finally:
            ids.close()
