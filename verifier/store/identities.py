"""The identity registry: agents and people, their operators, their bearer tokens (hashed), and
the invites that let an operator register their own agents.

This is the local stand-in for Commons identity (design §6: "authenticate the caller by Commons
bearer token and resolve the operator"); with the Commons on PostgreSQL the registry lives there
(verifier.commons.pgidentities), shared by every instance. Only sha256 of a token or an invite
code is stored, in a file of mode 0600; a token is shown once, when it is made.

Each actor has one live token at a time, named by the actor's handle (`rw token revoke HANDLE`).
A token carries when it expires (`TOKEN_TTL` unless made otherwise; tokens made before expiry
existed keep none until rotated), the projects it may act in (none listed: every project) and
the kinds of action it may take (`SCOPES`: `read`, `leaf`, `steward`; an agent's default is read
and leaf, a person's all three). `require` is the one check of a token's scope, a plain function.
Who may manage whose token (`may_manage`): an admin any, a person their own and their agents',
an agent its own.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal, Protocol

from pydantic import Field, ValidationError

from verifier.constants import INVITE_MAX_AGENTS, INVITE_TTL, INVITE_TTL_MAX, TOKEN_TTL, TOKEN_TTL_MAX
from verifier.errors import AuthError, ConflictError, FormatError, NotFound, ScopeError
from verifier.formats.base import HANDLE_RE, Strict, iso
from verifier.secrets.tokens import new_token
from verifier.store.files import exclusive_lock, write_atomic

ActorKind = Literal["agent", "human"]
Scope = Literal["read", "leaf", "steward"]
SCOPES: tuple[Scope, ...] = ("read", "leaf", "steward")
DEFAULT_SCOPES: dict[ActorKind, tuple[Scope, ...]] = {"agent": ("read", "leaf"), "human": SCOPES}
# What each scope lets a token do, in the words of a refusal.
SCOPE_MEANS: dict[Scope, str] = {
    "read": "read what needs a token (whoami, inbox, submissions, token list)",
    "leaf": "do leaf work (claim, release, submit, post on a thread)",
    "steward": "take a person's actions (push, edits, holds, verdicts, reverts, invites, others' tokens)"}
TOKEN_PREFIX = "rwt_"  # noqa: S105 - a prefix that makes tokens recognisable, not a secret
INVITE_PREFIX = "rwi_"
# Both spellings (with and without the checksum, see verifier.secrets.tokens) have this shape.
TOKEN_SHAPE = re.compile(r"^rwt_[A-Za-z0-9_-]{43}$")
INVITE_SHAPE = re.compile(r"^rwi_[A-Za-z0-9_-]{43}$")
REVOKED = "revoked"  # a marker no sha256 equals


@dataclass(frozen=True)
class Actor:
    """An authenticated caller: who acts, which person answers for them, and what their token
    may do (`projects` empty: every project; `scopes` None: the kind's default, `granted`)."""

    handle: str
    operator: str
    type: ActorKind
    projects: tuple[str, ...] = ()
    scopes: frozenset[str] | None = None
    admin: bool = False

    @property
    def granted(self) -> frozenset[str]:
        """The kinds of action the token may take."""
        return self.scopes if self.scopes is not None else frozenset(DEFAULT_SCOPES[self.type])


@dataclass(frozen=True)
class Grant:
    """What a new or rotated token may do: how long it lives, where, which kinds of action.
    `scopes` None: the actor kind's default; `projects` empty: every project."""

    expires_in: timedelta = TOKEN_TTL
    projects: tuple[str, ...] = ()
    scopes: tuple[Scope, ...] | None = None
    admin: bool = False


@dataclass(frozen=True)
class TokenInfo:
    """One actor's token as `rw token list` shows it (never the token, never its hash)."""

    handle: str
    operator: str
    type: ActorKind
    admin: bool
    state: Literal["live", "expired", "revoked"]
    created_at: str
    expires_at: str | None
    projects: tuple[str, ...]
    scopes: tuple[str, ...]
    revoked_because: str | None

    def to_json(self) -> dict[str, object]:
        return {"handle": self.handle, "operator": self.operator, "type": self.type, "admin": self.admin,
                "state": self.state, "created_at": self.created_at, "expires_at": self.expires_at,
                "projects": list(self.projects), "scopes": list(self.scopes),
                "revoked_because": self.revoked_because}


@dataclass(frozen=True)
class Joined:
    """What redeeming an invite made: the person's token (None when the operator was registered
    already and keeps their own) and each agent's."""

    project: str
    operator: str
    person_token: str | None
    agents: dict[str, str]
    expires_at: str


class Identities(Protocol):
    """What every registry does: this file's `FileIdentities` (the default), or
    `verifier.commons.pgidentities.PgIdentities` (several instances on a PostgreSQL Commons)."""

    def authenticate(self, token: str, now: datetime | None = None) -> Actor: ...
    def add(self, handle: str, operator: str, kind: ActorKind, now: datetime, grant: Grant | None = None) -> str: ...
    def get(self, handle: str) -> Actor | None: ...
    def revoke_leaked(self, tokens: list[str], now: datetime, where: str) -> list[str]: ...
    def tokens(self, now: datetime) -> list[TokenInfo]: ...
    def revoke(self, handle: str, now: datetime, why: str) -> TokenInfo: ...
    def rotate(self, handle: str, now: datetime, expires_in: timedelta | None = None) -> str: ...
    def invite(self, project: str, operator: str, agents: int, now: datetime, by: str,
               expires_in: timedelta | None = None) -> tuple[str, str]: ...
    def join(self, code: str, handles: list[str], now: datetime) -> Joined: ...


# pure rules ----------------------------------------------------------------------------------------

def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def require(actor: Actor, kind: Scope, project: str | None) -> None:
    """Refuse (ScopeError, 403 `token_scope`) a token used outside its scopes or its projects."""
    if kind not in actor.granted:
        raise ScopeError(f"the token of {actor.handle} may not {SCOPE_MEANS[kind]}: its scopes are "
                         f"{', '.join(sorted(actor.granted)) or '(none)'}; it needs {kind!r}")
    if project is not None and actor.projects and project not in actor.projects:
        raise ScopeError(f"the token of {actor.handle} is for {', '.join(actor.projects)}, not {project}")


def may_manage(actor: Actor, owner: TokenInfo | Actor) -> bool:
    """An admin manages every token; a person their own and their agents'; an agent its own."""
    if actor.admin or owner.handle == actor.handle:
        return True
    return actor.type == "human" and owner.operator == actor.handle


def check_handle(name: str, value: str) -> None:
    if not re.match(HANDLE_RE, value):
        raise FormatError(f"{name} {value!r} must be 1-63 of a-z, 0-9, '_', '.', '-'")


def check_lifetime(expires_in: timedelta, most: timedelta, what: str) -> None:
    if not timedelta(seconds=1) <= expires_in <= most:
        raise FormatError(f"{what} {int(expires_in.total_seconds())}s: expected at least 1s and at most "
                          f"{most.days}d")


# the file registry ----------------------------------------------------------------------------------

class Entry(Strict):
    operator: str
    type: ActorKind = "agent"
    token_sha256: str
    created_at: str = ""
    reissued_at: str | None = None
    revoked_at: str | None = None
    revoked_because: str | None = None
    expires_at: str | None = None  # None: a token made before tokens expired
    projects: tuple[str, ...] = ()
    scopes: tuple[Scope, ...] | None = None
    admin: bool = False

    def actor(self, handle: str) -> Actor:
        scopes = frozenset(self.scopes) if self.scopes is not None else None
        return Actor(handle, self.operator, self.type, self.projects, scopes, self.admin)

    def info(self, handle: str, now: datetime) -> TokenInfo:
        state: Literal["live", "expired", "revoked"] = "revoked" if self.token_sha256 == REVOKED else \
            "expired" if expired(self.expires_at, now) else "live"
        return TokenInfo(handle, self.operator, self.type, self.admin, state, self.reissued_at or self.created_at,
                         self.expires_at, self.projects, tuple(sorted(self.actor(handle).granted)),
                         self.revoked_because if state == "revoked" else None)


class Invite(Strict):
    code_sha256: str
    project: str
    operator: str
    agents: int
    created_by: str
    created_at: str
    expires_at: str
    used_at: str | None = None


class Registry(Strict):
    actors: dict[str, Entry] = Field(default_factory=dict)
    invites: dict[str, Invite] = Field(default_factory=dict)


def expired(expires_at: str | None, now: datetime) -> bool:
    return expires_at is not None and datetime.fromisoformat(expires_at) <= now


def clock() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


class FileIdentities:
    """Identities kept in one JSON file under the verifier home (0600, written atomically under a lock)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _load(self) -> Registry:
        if not self.path.exists():
            return Registry()
        try:
            return Registry.model_validate_json(self.path.read_bytes())
        except ValidationError as exc:
            raise FormatError(f"identity registry is unreadable: {exc.errors()[0]['msg']}", str(self.path)) from exc

    def _save(self, registry: Registry) -> None:
        write_atomic(self.path, registry.model_dump_json(indent=2, exclude_none=True).encode(), mode=0o600)

    def authenticate(self, token: str, now: datetime | None = None) -> Actor:
        if not token:
            raise AuthError("no bearer token: set RW_TOKEN (or send Authorization: Bearer)", code="no_token")
        if not TOKEN_SHAPE.match(token):
            raise AuthError("malformed bearer token")
        wanted = token_hash(token)
        match: tuple[str, Entry] | None = None
        # Compare against every entry in constant time; no early exit that times the match.
        for handle, entry in self._load().actors.items():
            if hmac.compare_digest(entry.token_sha256, wanted):
                match = (handle, entry)
        if match is None:
            raise AuthError("unknown or revoked bearer token")
        handle, entry = match
        if expired(entry.expires_at, now or clock()):
            raise AuthError(f"the token of {handle} expired at {entry.expires_at}; rotate it (`rw token rotate "
                            f"{handle}`, by its operator or the admin)", code="token_expired")
        return entry.actor(handle)

    def add(self, handle: str, operator: str, kind: ActorKind, now: datetime, grant: Grant | None = None) -> str:
        check_handle("handle", handle)
        check_handle("operator", operator)
        grant = grant or Grant()
        check_lifetime(grant.expires_in, TOKEN_TTL_MAX, "token lifetime")
        for slug in grant.projects:
            check_handle("project", slug)
        token = new_token()
        with exclusive_lock(self.path.with_suffix(".lock")):
            registry = self._load()
            self._add(registry, handle, operator, kind, token, now, grant)
            self._save(registry)
        return token

    @staticmethod
    def _add(registry: Registry, handle: str, operator: str, kind: ActorKind, token: str, now: datetime,
             grant: Grant) -> None:
        old = registry.actors.get(handle)
        new = Entry(operator=operator, type=kind, token_sha256=token_hash(token), created_at=iso(now),
                    expires_at=iso(now + grant.expires_in), projects=grant.projects, scopes=grant.scopes,
                    admin=grant.admin)
        if old is not None:
            # A revoked token: the operator gives the same actor a new one (same operator, same kind).
            if old.token_sha256 != REVOKED or old.operator != operator or old.type != kind:
                raise ConflictError(f"{handle} is already registered")
            new = new.model_copy(update={"created_at": old.created_at, "reissued_at": iso(now)})
        registry.actors[handle] = new

    def get(self, handle: str) -> Actor | None:
        entry = self._load().actors.get(handle)
        return entry.actor(handle) if entry is not None else None

    def tokens(self, now: datetime) -> list[TokenInfo]:
        return [entry.info(handle, now) for handle, entry in sorted(self._load().actors.items())]

    def revoke(self, handle: str, now: datetime, why: str) -> TokenInfo:
        """Revoke `handle`'s token (at once, everywhere it authenticates); the actor stays registered."""
        with exclusive_lock(self.path.with_suffix(".lock")):
            registry = self._load()
            entry = registry.actors.get(handle)
            if entry is None:
                raise NotFound(f"there is no agent or person {handle!r}", code="no_actor")
            if entry.token_sha256 != REVOKED:
                entry = registry.actors[handle] = entry.model_copy(update={
                    "token_sha256": REVOKED, "revoked_at": iso(now), "revoked_because": why[:200]})
                self._save(registry)
        return entry.info(handle, now)

    def rotate(self, handle: str, now: datetime, expires_in: timedelta | None = None) -> str:
        """A new token for `handle` (the old one authenticates no more), with the same projects and
        scopes, living `expires_in` (default TOKEN_TTL) from now. Works on an expired or revoked one."""
        lifetime = expires_in or TOKEN_TTL
        check_lifetime(lifetime, TOKEN_TTL_MAX, "token lifetime")
        token = new_token()
        with exclusive_lock(self.path.with_suffix(".lock")):
            registry = self._load()
            entry = registry.actors.get(handle)
            if entry is None:
                raise NotFound(f"there is no agent or person {handle!r}", code="no_actor")
            registry.actors[handle] = entry.model_copy(update={
                "token_sha256": token_hash(token), "expires_at": iso(now + lifetime), "reissued_at": iso(now),
                "revoked_at": None, "revoked_because": None})
            self._save(registry)
        return token

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
            registry = self._load()
            for handle, entry in sorted(registry.actors.items()):
                if entry.token_sha256 in wanted:
                    registry.actors[handle] = entry.model_copy(update={
                        "token_sha256": REVOKED, "revoked_at": iso(now),
                        "revoked_because": f"the token was found in {where[:200]}"})
                    revoked.append(handle)
            if revoked:
                self._save(registry)
        return revoked

    # invites ----------------------------------------------------------------------------------------

    def invite(self, project: str, operator: str, agents: int, now: datetime, by: str,
               expires_in: timedelta | None = None) -> tuple[str, str]:
        """A one-time code that registers `operator` (a person, unless registered already) and up to
        `agents` agents of theirs; returns (invite id, code). Only the code's sha256 is kept."""
        check_handle("project", project)
        check_handle("operator", operator)
        if not 0 <= agents <= INVITE_MAX_AGENTS:
            raise FormatError(f"agents {agents}: expected 0 to {INVITE_MAX_AGENTS}")
        expires_in = expires_in or INVITE_TTL
        check_lifetime(expires_in, INVITE_TTL_MAX, "invite lifetime")
        code = INVITE_PREFIX + secrets.token_urlsafe(32)
        invite_id = "inv_" + secrets.token_hex(8)
        with exclusive_lock(self.path.with_suffix(".lock")):
            registry = self._load()
            known = registry.actors.get(operator)
            if known is not None and known.type != "human":
                raise ConflictError(f"{operator} is an agent; an invite names the person who operates the agents")
            registry.invites[invite_id] = Invite(
                code_sha256=token_hash(code), project=project, operator=operator, agents=agents, created_by=by,
                created_at=iso(now), expires_at=iso(now + expires_in))
            self._save(registry)
        return invite_id, code

    def join(self, code: str, handles: list[str], now: datetime) -> Joined:
        """Redeem an invite once: register its person (if new) and agents, all or nothing.

        `handles`: the agents' handles the operator chose (at most the invite's number); the rest
        are named `<operator>-agent-<n>`. A used, expired or unknown code is AuthError (401)."""
        if not INVITE_SHAPE.match(code):
            raise AuthError("malformed invite code (expected rwi_ and 43 characters)", code="bad_invite")
        for handle in handles:
            check_handle("agent", handle)
        wanted = token_hash(code)
        with exclusive_lock(self.path.with_suffix(".lock")):
            registry = self._load()
            invite_id, invite = _usable_invite(registry, wanted, now)
            if len(handles) > invite.agents or len(set(handles)) != len(handles):
                raise FormatError(f"the invite is for {invite.agents} agent(s), each named once; got "
                                  f"{', '.join(handles)}")
            names = [*handles, *default_names(invite.operator, invite.agents - len(handles),
                                               set(registry.actors) | set(handles))]
            person: str | None = None
            if invite.operator not in registry.actors:
                person = new_token()
                self._add(registry, invite.operator, invite.operator, "human", person, now, Grant())
            elif registry.actors[invite.operator].type != "human":
                raise ConflictError(f"{invite.operator} is an agent now; the invite cannot be used")
            agents = {}
            for name in names:
                if name in registry.actors:
                    raise ConflictError(f"{name} is already registered; choose another handle", code="handle_taken")
                agents[name] = new_token()
                self._add(registry, name, invite.operator, "agent", agents[name], now,
                          Grant(projects=(invite.project,)))
            registry.invites[invite_id] = invite.model_copy(update={"used_at": iso(now)})
            self._save(registry)
        return Joined(invite.project, invite.operator, person, agents, iso(now + TOKEN_TTL))


def _usable_invite(registry: Registry, wanted: str, now: datetime) -> tuple[str, Invite]:
    """The invite whose code hashes to `wanted`, if unused and unexpired (AuthError `bad_invite`)."""
    found: tuple[str, Invite] | None = None
    for invite_id, invite in registry.invites.items():  # constant time, as tokens are
        if hmac.compare_digest(invite.code_sha256, wanted):
            found = (invite_id, invite)
    if found is None:
        raise AuthError("unknown invite code", code="bad_invite")
    if found[1].used_at is not None:
        raise AuthError(f"this invite was used at {found[1].used_at}; ask for a new one", code="bad_invite")
    if expired(found[1].expires_at, now):
        raise AuthError(f"this invite expired at {found[1].expires_at}; ask for a new one", code="bad_invite")
    return found


def default_names(operator: str, count: int, taken: set[str]) -> list[str]:
    names: list[str] = []
    number = 1
    while len(names) < count:
        name = f"{operator[:48]}-agent-{number}"
        if name not in taken:
            names.append(name)
        number += 1
    return names


def token_valid(identities: Identities, token: str, now: datetime) -> Actor | None:
    """The actor a token names if it authenticates now (not unknown, revoked or expired), else None:
    what a session re-checks on each request."""
    try:
        return identities.authenticate(token, now)
    except AuthError:
        return None
