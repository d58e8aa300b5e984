"""The identity registry in the PostgreSQL Commons (docs/deploy.md): the same calls as
`verifier.store.identities.FileIdentities`, for a deployment of several instances, so a token made
or revoked on one instance holds on every other at once.

A token is found by its sha256 through an index (the file registry compares against every entry in
constant time instead; here the lookup key is already the hash of a 256-bit random token, so the
time a lookup takes says nothing useful about any token). A registry moving to PostgreSQL starts
from the home's identities.json: its entries are copied in once, while the table is empty.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from pathlib import Path

from verifier.commons.pgdb import PgDatabase, shared_database
from verifier.errors import AuthError, ConflictError, FormatError
from verifier.formats.base import HANDLE_RE, iso
from verifier.secrets.tokens import new_token
from verifier.store.identities import TOKEN_SHAPE, Actor, ActorKind, Grant, Joined, TokenInfo, token_hash

REVOKED = "revoked"
# Expiry, scopes, token management and invites live in the file registry so far (docs/deploy.md).
_NOT_YET = ("token management (list, revoke, rotate, invites) is not built for the PostgreSQL Commons yet; "
            "tokens there do not expire and are scoped by their kind only")


class PgIdentities:
    def __init__(self, dsn: str, seed: Path | None = None, *, shared: bool = True) -> None:
        # shared: this process's one PgDatabase for the DSN (verifier.commons.pgdb.shared_database)
        self.db = shared_database(dsn) if shared else PgDatabase(dsn)
        self.seed = seed
        self._ready = False

    def close(self) -> None:
        self.db.close()

    def _ensure(self) -> PgDatabase:
        if not self._ready:
            self.db.ensure("")
            if self.seed is not None and self.seed.exists():
                self._copy_in(self.seed)
            self._ready = True
        return self.db

    def _copy_in(self, path: Path) -> None:
        try:
            actors: dict[str, dict[str, str]] = json.loads(path.read_bytes())["actors"]
        except (ValueError, KeyError, TypeError) as exc:
            raise FormatError(f"identity registry is unreadable: {exc}", str(path)) from exc
        with self.db.write() as conn:
            if conn.execute("SELECT 1 FROM identities LIMIT 1").fetchone() is not None:
                return  # copied once, by whichever instance came first
            conn.executemany(
                "INSERT INTO identities (handle, operator, type, token_sha256, created_at, reissued_at, revoked_at, "
                "revoked_because) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(handle, entry["operator"], entry.get("type", "agent"), entry["token_sha256"],
                  entry.get("created_at", ""), entry.get("reissued_at"), entry.get("revoked_at"),
                  entry.get("revoked_because")) for handle, entry in sorted(actors.items())])

    def authenticate(self, token: str, now: datetime | None = None) -> Actor:
        if not token:
            raise AuthError("no bearer token: set RW_TOKEN (or send Authorization: Bearer)")
        if not TOKEN_SHAPE.match(token):
            raise AuthError("malformed bearer token")
        rows = self._ensure().read("SELECT handle, operator, type FROM identities WHERE token_sha256 = ?",
                                   (token_hash(token),))
        if not rows:
            raise AuthError("unknown or revoked bearer token")
        kind: ActorKind = "human" if rows[0]["type"] == "human" else "agent"
        return Actor(handle=rows[0]["handle"], operator=rows[0]["operator"], type=kind)

    def add(self, handle: str, operator: str, kind: ActorKind, now: datetime, grant: Grant | None = None) -> str:
        if grant is not None and grant != Grant():
            raise ConflictError(_NOT_YET, code="not_on_postgres")
        for name, value in (("handle", handle), ("operator", operator)):
            if not re.match(HANDLE_RE, value):
                raise FormatError(f"{name} {value!r} must be 1-63 of a-z, 0-9, '_', '.', '-'")
        token = new_token()
        with self._ensure().write(f"identity:{handle}") as conn:
            old = conn.execute("SELECT operator, type, token_sha256 FROM identities WHERE handle = ?",
                               (handle,)).fetchone()
            if old is not None:
                # A revoked token: the operator gives the same actor a new one (same operator, same kind).
                if old["token_sha256"] != REVOKED or old["operator"] != operator \
                        or (old["type"] == "human") != (kind == "human"):
                    raise ConflictError(f"{handle} is already registered")
                conn.execute("UPDATE identities SET token_sha256 = ?, reissued_at = ? WHERE handle = ?",
                             (token_hash(token), iso(now), handle))
                return token
            conn.execute("INSERT INTO identities (handle, operator, type, token_sha256, created_at) "
                         "VALUES (?, ?, ?, ?, ?)", (handle, operator, kind, token_hash(token), iso(now)))
        return token

    def get(self, handle: str) -> Actor | None:
        rows = self._ensure().read("SELECT operator, type FROM identities WHERE handle = ?", (handle,))
        if not rows:
            return None
        kind: ActorKind = "human" if rows[0]["type"] == "human" else "agent"
        return Actor(handle, rows[0]["operator"], kind)

    def revoke_leaked(self, tokens: list[str], now: datetime, where: str) -> list[str]:
        """Revoke every registered token among `tokens`; return whose (see FileIdentities)."""
        wanted = sorted({token_hash(token) for token in tokens if TOKEN_SHAPE.match(token)})
        if not wanted:
            return []
        revoked: list[str] = []
        with self._ensure().write() as conn:
            for digest in wanted:
                rows = conn.execute(
                    "UPDATE identities SET token_sha256 = ?, revoked_at = ?, revoked_because = ? "
                    "WHERE token_sha256 = ? RETURNING handle",
                    (REVOKED, iso(now), f"the token was found in {where[:200]}", digest)).fetchall()
                revoked += [row["handle"] for row in rows]
        return sorted(revoked)

    def tokens(self, now: datetime) -> list[TokenInfo]:
        raise ConflictError(_NOT_YET, code="not_on_postgres")

    def revoke(self, handle: str, now: datetime, why: str) -> TokenInfo:
        raise ConflictError(_NOT_YET, code="not_on_postgres")

    def rotate(self, handle: str, now: datetime, expires_in: timedelta | None = None) -> str:
        raise ConflictError(_NOT_YET, code="not_on_postgres")

    def invite(self, project: str, operator: str, agents: int, now: datetime, by: str,
               expires_in: timedelta | None = None) -> tuple[str, str]:
        raise ConflictError(_NOT_YET, code="not_on_postgres")

    def join(self, code: str, handles: list[str], now: datetime) -> Joined:
        raise ConflictError(_NOT_YET, code="not_on_postgres")
