"""The UI's session store (verifier.ui.sessions): only people sign in; at rest there is neither the
cookie's session id nor the token; a session ends when it expires, when its person signs out, and
as soon as the token behind it is revoked; the CSRF token is the session's own."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from tests.support.world import NOW
from verifier.commons.db import Database
from verifier.errors import AuthError
from verifier.store.identities import FileIdentities
from verifier.ui.sessions import SessionStore, csrf_matches, id_hash


def _store(tmp_path: Path) -> tuple[SessionStore, FileIdentities, Database]:
    identities = FileIdentities(tmp_path / "identities.json")
    db = Database(tmp_path / "commons.sqlite")
    return SessionStore(db, identities, ttl=timedelta(hours=1)), identities, db


def test_a_session_keeps_neither_its_id_nor_the_token_at_rest(tmp_path: Path) -> None:
    store, identities, db = _store(tmp_path)
    token = identities.add("stew", "stew", "human", NOW)
    session = store.sign_in(token, NOW)
    db.close()
    with sqlite3.connect(tmp_path / "commons.sqlite") as conn:
        rows = conn.execute("SELECT * FROM ui_sessions").fetchall()
    stored = repr(rows)
    assert len(rows) == 1 and id_hash(session.session_id) in stored
    assert session.session_id not in stored and token not in stored and token.encode().hex() not in stored
    found = store.find(session.session_id, NOW + timedelta(minutes=5))
    assert found is not None and found.actor.handle == "stew" and found.csrf == session.csrf


def test_only_people_sign_in_and_a_bad_token_is_refused(tmp_path: Path) -> None:
    store, identities, _db = _store(tmp_path)
    agent = identities.add("agent-a", "op-a", "agent", NOW)
    with pytest.raises(AuthError, match="only people sign in"):
        store.sign_in(agent, NOW)
    with pytest.raises(AuthError):
        store.sign_in("rwt_" + "A" * 43, NOW)


def test_a_session_ends_when_it_expires_when_signed_out_and_when_its_token_is_revoked(tmp_path: Path) -> None:
    store, identities, _db = _store(tmp_path)
    token = identities.add("stew", "stew", "human", NOW)
    expiring = store.sign_in(token, NOW)
    assert store.find(expiring.session_id, NOW + timedelta(hours=1)) is None  # the TTL is the end
    assert store.find(expiring.session_id, NOW) is None  # and the row went with it
    leaving = store.sign_in(token, NOW)
    store.sign_out(leaving.session_id)
    assert store.find(leaving.session_id, NOW) is None
    revoked = store.sign_in(token, NOW)
    assert store.find(revoked.session_id, NOW) is not None
    identities.revoke_leaked([token], NOW, "a test")
    assert store.find(revoked.session_id, NOW) is None


def test_a_forged_or_foreign_session_id_opens_nothing_and_csrf_is_per_session(tmp_path: Path) -> None:
    store, identities, _db = _store(tmp_path)
    token = identities.add("stew", "stew", "human", NOW)
    one, two = store.sign_in(token, NOW), store.sign_in(token, NOW)
    for forged in ("", "x" * 43, one.session_id[:-1] + ("A" if one.session_id[-1] != "A" else "B"), "y" * 500):
        assert store.find(forged, NOW) is None
    assert one.csrf != two.csrf
    assert csrf_matches(one.session_id, one.csrf) and not csrf_matches(one.session_id, two.csrf)
    assert not csrf_matches(one.session_id, None)
