"""The identity registry: agents and people, their operators, and hashed bearer tokens.

This is the local stand-in for Commons identity (design §6: "authenticate the caller by Commons
bearer token and resolve the operator"); with the Commons on PostgreSQL the registry lives there
(verifier.commons.pgidentities), shared by every instance. Only sha256(token) is stored; a token
is shown once, when it is made.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal, Protocol

from verifier.errors import AuthError, ConflictError, FormatError
from verifier.formats.base import HANDLE_RE, iso
from verifier.secrets.tokens import new_token
from verifier.store.files import exclusive_lock, write_atomic

ActorKind = Literal["agent", "human"]
TOKEN_PREFIX = "rwt_"  # noqa: S105 - a prefix that makes tokens recognisable, not a secret
# Both spellings (with and without the checksum, see verifier.secrets.tokens) have this shape.
TOKEN_SHAPE = re.compile(r"^rwt_[A-Za-z0-9_-]{43}$")


@dataclass(frozen=True)
class Actor:
    """An authenticated caller: who acts, and which person answers for them."""

    handle: str
    operator: str
    type: ActorKind


class Identities(Protocol):
    """What every registry does: this file's `FileIdentities` (the default), or
    `verifier.commons.pgidentities.PgIdentities` (several instances on a PostgreSQL Commons)."""

    def authenticate(self, token: str) -> Actor: ...
    def add(self, handle: str, operator: str, kind: ActorKind, now: datetime) -> str: ...
    def get(self, handle: str) -> Actor | None: ...
    def revoke_leaked(self, tokens: list[str], now: datetime, where: str) -> list[str]: ...


def _reissuable(entry: dict[str, str], operator: str, kind: ActorKind) -> bool:
    """A handle whose token was revoked gets a new one when registered again, same operator, same kind."""
    return entry.get("token_sha256") == "revoked" and entry.get("operator") == operator \
        and (entry.get("type") == "human") == (kind == "human")


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class FileIdentities:
    """Identities kept in one JSON file under the verifier home."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _load(self) -> dict[str, dict[str, str]]:
        if not self.path.exists():
            return {}
        try:
            data = json.loads(self.path.read_bytes())
            actors: dict[str, dict[str, str]] = data["actors"]
        except (ValueError, KeyError, TypeError) as exc:
            raise FormatError(f"identity registry is unreadable: {exc}", str(self.path)) from exc
        return actors

    def authenticate(self, token: str) -> Actor:
        if not token:
            raise AuthError("no bearer token: set RW_TOKEN (or send Authorization: Bearer)")
        if not TOKEN_SHAPE.match(token):
            raise AuthError("malformed bearer token")
        wanted = token_hash(token)
        match: tuple[str, dict[str, str]] | None = None
        # Compare against every entry in constant time; no early exit that times the match.
        for handle, entry in self._load().items():
            if hmac.compare_digest(entry["token_sha256"], wanted):
                match = (handle, entry)
        if match is None:
            raise AuthError("unknown or revoked bearer token")
        handle, entry = match
        kind: ActorKind = "human" if entry.get("type") == "human" else "agent"
        return Actor(handle=handle, operator=entry["operator"], type=kind)

    def add(self, handle: str, operator: str, kind: ActorKind, now: datetime) -> str:
        for name, value in (("handle", handle), ("operator", operator)):
            if not re.match(HANDLE_RE, value):
                raise FormatError(f"{name} {value!r} must be 1-63 of a-z, 0-9, '_', '.', '-'")
        token = new_token()
        with exclusive_lock(self.path.with_suffix(".lock")):
            actors = self._load()
            old = actors.get(handle)
            if old is not None and not _reissuable(old, operator, kind):
                raise ConflictError(f"{handle} is already registered")
            if old is not None:  # a revoked token: the operator gives the same actor a new one
                old["token_sha256"] = token_hash(token)
                old["reissued_at"] = iso(now)
                write_atomic(self.path, json.dumps({"actors": actors}, indent=2, sort_keys=True).encode(), mode=0o600)
                return token
            actors[handle] = {
                "operator": operator,
                "type": kind,
                "token_sha256": token_hash(token),
                "created_at": iso(now),
            }
            write_atomic(self.path, json.dumps({"actors": actors}, indent=2, sort_keys=True).encode(), mode=0o600)
        return token

    def get(self, handle: str) -> Actor | None:
        entry = self._load().get(handle)
        if entry is None:
            return None
        kind: ActorKind = "human" if entry.get("type") == "human" else "agent"
        return Actor(handle, entry["operator"], kind)

    def revoke_leaked(self, tokens: list[str], now: datetime, where: str) -> list[str]:
        """Revoke every registered token among `tokens` (found where they must not be); return whose.

        The entry keeps its handle and operator, so history still resolves, but no token hash: the
        token authenticates no more. The owner is told by the caller (a Commons message).
        """
        wanted = {token_hash(token) for token in tokens if TOKEN_SHAPE.match(token)}
        if not wanted:
            return []
        revoked: list[str] = []
        with exclusive_lock(self.path.with_suffix(".lock")):
            actors = self._load()
            for handle, entry in sorted(actors.items()):
                if entry.get("token_sha256") in wanted:
                    entry["token_sha256"] = "revoked"  # noqa: S105 - a marker no sha256 equals
                    entry["revoked_at"] = iso(now)
                    entry["revoked_because"] = f"the token was found in {where[:200]}"
                    revoked.append(handle)
            if revoked:
                write_atomic(self.path, json.dumps({"actors": actors}, indent=2, sort_keys=True).encode(), mode=0o600)
        return revoked
