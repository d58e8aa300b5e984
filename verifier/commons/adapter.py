"""The Commons adapter interface: everything the verifier asks of Commons, in one Protocol.

Design §10 gives Commons identity, the leaf task board, messages and the Space entry file. The
verifier needs these calls and no others, so a real Commons client replaces the local SQLite one
(`verifier.commons.local.LocalCommons`) by implementing exactly this:

- identity: `authenticate(token)` resolves a bearer token to its agent and operator (raising
  `AuthError`), `actor(handle)` looks one up. Tokens never leave the adapter.
- the task board: leaves themselves live in the project repositories (the Planner writes them);
  Commons holds the *claims*: who is working on a leaf until when. `claim` is exclusive (raises
  `ClaimConflict` while another agent's claim is live); an expired claim is simply not live, so
  the leaf is back in the pool without anyone cleaning up.
- messages: a thread per leaf (`to_agent` None) and an inbox per agent. `post` must be idempotent
  on `OutgoingMessage.key`: the notifier may post the same message twice after a crash and
  Commons must keep one; `message(key)` finds what was stored under a key.
- outage windows: when the verifier was down, so leaf and claim expiry can be extended (§11).

All times are timezone-aware UTC datetimes, passed in by the caller (the adapter never reads the
clock for a rule).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol

from verifier.errors import ConflictError
from verifier.store.identities import Actor

MessageKind = Literal[
    "outcome", "first_minute", "finding_linked", "use_score", "hypothesis_moved", "new_leaf", "secret",
    "question", "task", "reverted", "needs_you",
]


class ClaimConflict(ConflictError):  # noqa: N818 - reads as the condition it reports
    """The leaf is claimed by another agent until `until`."""

    def __init__(self, message: str, holder: str, until: datetime) -> None:
        super().__init__(message)
        self.holder = holder
        self.until = until


@dataclass(frozen=True)
class Claim:
    project: str
    leaf_id: str
    agent: str
    claimed_at: datetime
    expires_at: datetime


@dataclass(frozen=True)
class OutgoingMessage:
    """A message to post. `to_agent` None posts on the leaf's thread; `key` makes posting idempotent."""

    key: str
    kind: MessageKind
    body: str
    project: str | None = None
    leaf_id: str | None = None
    to_agent: str | None = None
    sender: str = "verifier"
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Message:
    id: int
    kind: str
    body: str
    project: str | None
    leaf_id: str | None
    to_agent: str | None
    sender: str
    data: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True)
class Outage:
    started_at: datetime
    ended_at: datetime

    @property
    def duration(self) -> timedelta:
        return self.ended_at - self.started_at


class Commons(Protocol):
    # identity
    def authenticate(self, token: str) -> Actor: ...

    def actor(self, handle: str) -> Actor | None: ...

    # the task board's claims
    def claim(self, project: str, leaf_id: str, agent: str, *, until: datetime, now: datetime) -> Claim: ...

    def release(self, project: str, leaf_id: str, agent: str, *, now: datetime) -> bool: ...

    def close_leaf(self, project: str, leaf_id: str) -> None: ...

    def claims(self, project: str, *, now: datetime) -> dict[str, Claim]: ...

    def extend_claims(self, outage: Outage) -> int: ...

    # messages
    def post(self, messages: list[OutgoingMessage], *, now: datetime) -> int: ...

    def message(self, key: str) -> Message | None: ...

    def inbox(self, agent: str, *, after: int = 0, limit: int = 100) -> list[Message]: ...

    def thread(self, project: str, leaf_id: str, *, after: int = 0, limit: int = 100) -> list[Message]: ...

    # outage windows
    def record_outage(self, outage: Outage) -> None: ...

    def outages(self) -> list[Outage]: ...
