"""docs/secrets.md: a revoked actor gets a new token from its operator with `rw agent add` again;
the leaked token stays dead, and a handle that was not revoked is still `already registered`."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from verifier.errors import AuthError, ConflictError
from verifier.store.identities import FileIdentities

NOW = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)


def test_a_revoked_handle_is_reissued_a_token_by_its_operator(tmp_path: Path) -> None:
    registry = FileIdentities(tmp_path / "identities.json")
    leaked = registry.add("leaky", "bob", "agent", NOW)
    assert registry.revoke_leaked([leaked], NOW, "a test") == ["leaky"]
    with pytest.raises(AuthError):
        registry.authenticate(leaked)
    with pytest.raises(ConflictError):
        registry.add("leaky", "mallory", "agent", NOW)  # another operator may not take the handle
    with pytest.raises(ConflictError):
        registry.add("leaky", "bob", "human", NOW)  # nor may the kind change
    fresh = registry.add("leaky", "bob", "agent", NOW)
    assert registry.authenticate(fresh).handle == "leaky"
    with pytest.raises(AuthError):
        registry.authenticate(leaked)


def test_a_handle_not_revoked_stays_already_registered(tmp_path: Path) -> None:
    registry = FileIdentities(tmp_path / "identities.json")
    registry.add("alice", "alice", "human", NOW)
    with pytest.raises(ConflictError, match="already registered"):
        registry.add("alice", "alice", "human", NOW)
