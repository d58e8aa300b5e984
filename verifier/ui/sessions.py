"""People's UI sessions: a bearer token exchanged for a session id the browser keeps in an
HttpOnly cookie, kept server-side in the Commons database.

- The session id is 32 random bytes. At rest there is only sha256 of it (the row's key) and the
  person's token sealed with AES-GCM under a key derived from the id: a copy of the database holds
  neither a cookie nor a token, and a stolen cookie is worth no more than the session it opens.
- Every request re-checks the token behind the session through the identities store, so a token
  revoked (or expired, or rotated) since sign-in ends the session at once; the row is removed.
- A session expires `UI_SESSION_TTL` after sign-in, whatever the cookie says.
- The CSRF token is an HMAC of the session id: the page carries it (in a meta tag, not script), the
  page's script sends it back in a header, and only the holder of the HttpOnly cookie can make it.

Only people sign in: an agent's token is refused here (agents use the API).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from verifier.commons.db import CommonsDB
from verifier.constants import UI_SESSION_TTL
from verifier.errors import AuthError
from verifier.store.identities import Actor, Identities

SCHEMA = """
CREATE TABLE IF NOT EXISTS ui_sessions (
  id_sha256 TEXT PRIMARY KEY, handle TEXT NOT NULL, nonce TEXT NOT NULL, sealed TEXT NOT NULL,
  created_at REAL NOT NULL, expires_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS ui_sessions_expiry ON ui_sessions (expires_at)
"""
# The cookie's value is this many random bytes, base64url: never guessable, never a token's shape.
SESSION_ID_BYTES = 32
MAX_SESSION_ID_CHARS = 64


@dataclass(frozen=True)
class Session:
    """A signed-in person: who, the CSRF token their page sends back, and when it ends."""

    session_id: str
    actor: Actor
    csrf: str
    expires_at: datetime


def _derive(session_id: str, purpose: bytes) -> bytes:
    return hmac.new(session_id.encode("ascii", errors="replace"), b"rw-ui-session:" + purpose,
                    hashlib.sha256).digest()


def id_hash(session_id: str) -> str:
    return _derive(session_id, b"id").hex()


def csrf_of(session_id: str) -> str:
    """The session's CSRF token: made from the id, so it needs no storage and no cookie of its own."""
    return _derive(session_id, b"csrf").hex()


def csrf_matches(session_id: str, sent: str | None) -> bool:
    return sent is not None and hmac.compare_digest(csrf_of(session_id), sent)


class SessionStore:
    """Sessions in the Commons database, each re-checked against `identities` when used."""

    def __init__(self, db: CommonsDB, identities: Identities, ttl: timedelta = UI_SESSION_TTL) -> None:
        self.db = db
        self.identities = identities
        self.ttl = ttl
        db.ensure(SCHEMA)

    def sign_in(self, token: str, now: datetime) -> Session:
        """A new session for the person `token` names; AuthError when it is not a valid person's token."""
        actor = self.identities.authenticate(token.strip())
        if actor.type != "human":
            raise AuthError(f"{actor.handle} is an agent: only people sign in to the UI (agents use the API with "
                            "their token)")
        session_id = secrets.token_urlsafe(SESSION_ID_BYTES)
        nonce = secrets.token_bytes(12)
        key = id_hash(session_id)
        sealed = AESGCM(_derive(session_id, b"key")).encrypt(nonce, token.strip().encode("utf-8"), key.encode())
        expires = now + self.ttl
        with self.db.write() as conn:
            conn.execute("DELETE FROM ui_sessions WHERE expires_at <= ?", (now.timestamp(),))
            conn.execute("INSERT INTO ui_sessions (id_sha256, handle, nonce, sealed, created_at, expires_at) "
                         "VALUES (?, ?, ?, ?, ?, ?)",
                         (key, actor.handle, nonce.hex(), sealed.hex(), now.timestamp(), expires.timestamp()))
        return Session(session_id, actor, csrf_of(session_id), expires)

    def find(self, session_id: str | None, now: datetime) -> Session | None:
        """The live session of this cookie, its token checked again now; None (and the row gone)
        when there is none, it expired, or its token no longer authenticates."""
        if not session_id or len(session_id) > MAX_SESSION_ID_CHARS:
            return None
        key = id_hash(session_id)
        rows = self.db.read("SELECT handle, nonce, sealed, expires_at FROM ui_sessions WHERE id_sha256 = ?", (key,))
        if not rows:
            return None
        row = rows[0]
        expires = datetime.fromtimestamp(float(row["expires_at"]), now.tzinfo)
        try:
            if expires <= now:
                raise AuthError("the session expired")
            token = AESGCM(_derive(session_id, b"key")).decrypt(bytes.fromhex(str(row["nonce"])),
                                                                 bytes.fromhex(str(row["sealed"])),
                                                                 key.encode()).decode("utf-8")
            actor = self.identities.authenticate(token)
            if actor.type != "human" or actor.handle != row["handle"]:
                raise AuthError("the session's token no longer names the person who signed in")
        except (AuthError, InvalidTag, ValueError):
            self._drop(key)
            return None
        return Session(session_id, actor, csrf_of(session_id), expires)

    def sign_out(self, session_id: str | None) -> None:
        if session_id and len(session_id) <= MAX_SESSION_ID_CHARS:
            self._drop(id_hash(session_id))

    def _drop(self, key: str) -> None:
        with self.db.write() as conn:
            conn.execute("DELETE FROM ui_sessions WHERE id_sha256 = ?", (key,))
