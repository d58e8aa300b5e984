"""The identity registry in the PostgreSQL Commons (docs/deploy.md): the same calls as
`verifier.store.identities.FileIdentities`, for a deployment of several instances, so a token made,
rotated or revoked on one instance holds on every other at once, and an invite is used once across
all of them.

A token is found by its sha256 through an index (the file registry compares against every entry in
constant time instead; here the lookup key is already the hash of a 256-bit random token, so the
time a lookup takes says nothing useful about any token); an invite code likewise. Expiry, projects,
scopes and the admin flag are columns (migration 0006); the rules over them are the file
registry's own (`Entry.actor`, `Entry.info`, `expired`). A registry moving to PostgreSQL starts
from the home's identities.json: its entries are copied in once, while the table is empty.
"""

from __future__ import annotations

import json
import secrets
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from verifier.commons.pgdb import PgDatabase, Transaction, shared_database
from verifier.constants import INVITE_MAX_AGENTS, INVITE_TTL, INVITE_TTL_MAX, TOKEN_TTL, TOKEN_TTL_MAX
from verifier.errors import AuthError, ConflictError, FormatError, NotFound
from verifier.formats.base import iso
from verifier.secrets.tokens import new_token
from verifier.store.identities import (
    INVITE_PREFIX,
    INVITE_SHAPE,
    REVOKED,
    TOKEN_SHAPE,
    Actor,
    ActorKind,
    Entry,
    Grant,
    Joined,
    Registry,
    TokenInfo,
    check_handle,
    check_lifetime,
    clock,
    default_names,
    expired,
    token_hash,
)

# Each statement written out whole (no SQL is ever built from values; the values go as parameters).
_INSERT = ("INSERT INTO identities (handle, operator, type, token_sha256, created_at, reissued_at, revoked_at, "
           "revoked_because, expires_at, projects, scopes, admin) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
_UPSERT = ("INSERT INTO identities (handle, operator, type, token_sha256, created_at, reissued_at, revoked_at, "
           "revoked_because, expires_at, projects, scopes, admin) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
           "ON CONFLICT (handle) DO UPDATE SET operator = excluded.operator, type = excluded.type, "
           "token_sha256 = excluded.token_sha256, created_at = excluded.created_at, "
           "reissued_at = excluded.reissued_at, revoked_at = excluded.revoked_at, "
           "revoked_because = excluded.revoked_because, expires_at = excluded.expires_at, "
           "projects = excluded.projects, scopes = excluded.scopes, admin = excluded.admin")
_BY_HANDLE_FOR_UPDATE = ("SELECT handle, operator, type, token_sha256, created_at, reissued_at, revoked_at, "
                         "revoked_because, expires_at, projects, scopes, admin FROM identities WHERE handle = ? "
                         "FOR UPDATE")
_BY_HANDLE = ("SELECT handle, operator, type, token_sha256, created_at, reissued_at, revoked_at, revoked_because, "
              "expires_at, projects, scopes, admin FROM identities WHERE handle = ?")
_BY_HASH = ("SELECT handle, operator, type, token_sha256, created_at, reissued_at, revoked_at, revoked_because, "
             "expires_at, projects, scopes, admin FROM identities WHERE token_sha256 = ?")
_ALL = ("SELECT handle, operator, type, token_sha256, created_at, reissued_at, revoked_at, revoked_because, "
        "expires_at, projects, scopes, admin FROM identities ORDER BY handle")


def _entry(row: Any) -> Entry:
    return Entry(operator=row["operator"], type="human" if row["type"] == "human" else "agent",
                 token_sha256=row["token_sha256"], created_at=row["created_at"] or "",
                 reissued_at=row["reissued_at"], revoked_at=row["revoked_at"],
                 revoked_because=row["revoked_because"], expires_at=row["expires_at"],
                 projects=tuple(json.loads(row["projects"] or "[]")),
                 scopes=tuple(json.loads(row["scopes"])) if row["scopes"] else None, admin=bool(row["admin"]))


def _values(handle: str, entry: Entry) -> tuple[object, ...]:
    return (handle, entry.operator, entry.type, entry.token_sha256, entry.created_at, entry.reissued_at,
            entry.revoked_at, entry.revoked_because, entry.expires_at, json.dumps(list(entry.projects)),
            json.dumps(list(entry.scopes)) if entry.scopes is not None else None, entry.admin)


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
            registry = Registry.model_validate_json(path.read_bytes())
        except ValidationError as exc:
            raise FormatError(f"identity registry is unreadable: {exc.errors()[0]['msg']}", str(path)) from exc
        with self.db.write() as conn:
            if conn.execute("SELECT 1 FROM identities LIMIT 1").fetchone() is not None:
                return  # copied once, by whichever instance came first
            conn.executemany(_INSERT, [_values(handle, entry) for handle, entry in sorted(registry.actors.items())])

    def _put(self, conn: Transaction, handle: str, entry: Entry) -> None:
        conn.execute(_UPSERT, _values(handle, entry))

    @staticmethod
    def _get(conn: Transaction, handle: str) -> Entry | None:
        row = conn.execute(_BY_HANDLE_FOR_UPDATE, (handle,)).fetchone()
        return _entry(row) if row is not None else None

    def authenticate(self, token: str, now: datetime | None = None) -> Actor:
        if not token:
            raise AuthError("no bearer token: set RW_TOKEN (or send Authorization: Bearer)", code="no_token")
        if not TOKEN_SHAPE.match(token):
            raise AuthError("malformed bearer token")
        rows = self._ensure().read(_BY_HASH, (token_hash(token),))
        if not rows:
            raise AuthError("unknown or revoked bearer token")
        handle, entry = rows[0]["handle"], _entry(rows[0])
        if expired(entry.expires_at, now or clock()):
            raise AuthError(f"the token of {handle} expired at {entry.expires_at}; rotate it (`rw token rotate "
                            f"{handle}`, by its operator or the admin)", code="token_expired")
        return entry.actor(handle)

    def _new_entry(self, conn: Transaction, handle: str, operator: str, kind: ActorKind, token: str,
                   now: datetime, grant: Grant) -> None:
        old = self._get(conn, handle)
        new = Entry(operator=operator, type=kind, token_sha256=token_hash(token), created_at=iso(now),
                    expires_at=iso(now + grant.expires_in), projects=grant.projects, scopes=grant.scopes,
                    admin=grant.admin)
        if old is not None:
            # A revoked token: the operator gives the same actor a new one (same operator, same kind).
            if old.token_sha256 != REVOKED or old.operator != operator or old.type != kind:
                raise ConflictError(f"{handle} is already registered")
            new = new.model_copy(update={"created_at": old.created_at, "reissued_at": iso(now)})
        self._put(conn, handle, new)

    def add(self, handle: str, operator: str, kind: ActorKind, now: datetime, grant: Grant | None = None) -> str:
        check_handle("handle", handle)
        check_handle("operator", operator)
        grant = grant or Grant()
        check_lifetime(grant.expires_in, TOKEN_TTL_MAX, "token lifetime")
        for slug in grant.projects:
            check_handle("project", slug)
        token = new_token()
        with self._ensure().write(f"identity:{handle}") as conn:
            self._new_entry(conn, handle, operator, kind, token, now, grant)
        return token

    def get(self, handle: str) -> Actor | None:
        rows = self._ensure().read(_BY_HANDLE, (handle,))
        return _entry(rows[0]).actor(handle) if rows else None

    def tokens(self, now: datetime) -> list[TokenInfo]:
        rows = self._ensure().read(_ALL)
        return [_entry(row).info(row["handle"], now) for row in rows]

    def revoke(self, handle: str, now: datetime, why: str) -> TokenInfo:
        with self._ensure().write(f"identity:{handle}") as conn:
            entry = self._get(conn, handle)
            if entry is None:
                raise NotFound(f"there is no agent or person {handle!r}", code="no_actor")
            if entry.token_sha256 != REVOKED:
                entry = entry.model_copy(update={"token_sha256": REVOKED, "revoked_at": iso(now),
                                                 "revoked_because": why[:200]})
                self._put(conn, handle, entry)
        return entry.info(handle, now)

    def rotate(self, handle: str, now: datetime, expires_in: timedelta | None = None) -> str:
        lifetime = expires_in or TOKEN_TTL
        check_lifetime(lifetime, TOKEN_TTL_MAX, "token lifetime")
        token = new_token()
        with self._ensure().write(f"identity:{handle}") as conn:
            entry = self._get(conn, handle)
            if entry is None:
                raise NotFound(f"there is no agent or person {handle!r}", code="no_actor")
            self._put(conn, handle, entry.model_copy(update={
                "token_sha256": token_hash(token), "expires_at": iso(now + lifetime), "reissued_at": iso(now),
                "revoked_at": None, "revoked_because": None}))
        return token

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

    def invite(self, project: str, operator: str, agents: int, now: datetime, by: str,
               expires_in: timedelta | None = None) -> tuple[str, str]:
        check_handle("project", project)
        check_handle("operator", operator)
        if not 0 <= agents <= INVITE_MAX_AGENTS:
            raise FormatError(f"agents {agents}: expected 0 to {INVITE_MAX_AGENTS}")
        lifetime = expires_in or INVITE_TTL
        check_lifetime(lifetime, INVITE_TTL_MAX, "invite lifetime")
        code, invite_id = INVITE_PREFIX + secrets.token_urlsafe(32), "inv_" + secrets.token_hex(8)
        with self._ensure().write(f"identity:{operator}") as conn:
            known = self._get(conn, operator)
            if known is not None and known.type != "human":
                raise ConflictError(f"{operator} is an agent; an invite names the person who operates the agents")
            conn.execute("INSERT INTO invites (id, code_sha256, project, operator, agents, created_by, created_at, "
                         "expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         (invite_id, token_hash(code), project, operator, agents, by, iso(now), iso(now + lifetime)))
        return invite_id, code

    def join(self, code: str, handles: list[str], now: datetime) -> Joined:
        """Redeem an invite once, all or nothing (see FileIdentities.join)."""
        if not INVITE_SHAPE.match(code):
            raise AuthError("malformed invite code (expected rwi_ and 43 characters)", code="bad_invite")
        for handle in handles:
            check_handle("agent", handle)
        with self._ensure().write() as conn:  # unscoped: serial with every registration
            row = conn.execute("SELECT id, project, operator, agents, expires_at, used_at FROM invites "
                               "WHERE code_sha256 = ? FOR UPDATE", (token_hash(code),)).fetchone()
            if row is None:
                raise AuthError("unknown invite code", code="bad_invite")
            if row["used_at"] is not None:
                raise AuthError(f"this invite was used at {row['used_at']}; ask for a new one", code="bad_invite")
            if expired(row["expires_at"], now):
                raise AuthError(f"this invite expired at {row['expires_at']}; ask for a new one", code="bad_invite")
            operator, project, count = str(row["operator"]), str(row["project"]), int(row["agents"])
            if len(handles) > count or len(set(handles)) != len(handles):
                raise FormatError(f"the invite is for {count} agent(s), each named once; got {', '.join(handles)}")
            taken = {str(r["handle"]) for r in conn.execute("SELECT handle FROM identities").fetchall()}
            names = [*handles, *default_names(operator, count - len(handles), taken | set(handles))]
            person: str | None = None
            known = self._get(conn, operator)
            if known is None:
                person = new_token()
                self._new_entry(conn, operator, operator, "human", person, now, Grant())
            elif known.type != "human":
                raise ConflictError(f"{operator} is an agent now; the invite cannot be used")
            agents: dict[str, str] = {}
            for name in names:
                if name in taken:
                    raise ConflictError(f"{name} is already registered; choose another handle", code="handle_taken")
                agents[name] = new_token()
                self._new_entry(conn, name, operator, "agent", agents[name], now, Grant(projects=(project,)))
            conn.execute("UPDATE invites SET used_at = ? WHERE id = ?", (iso(now), row["id"]))
        return Joined(project, operator, person, agents, iso(now + TOKEN_TTL))
