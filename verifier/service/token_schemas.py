"""The JSON bodies of the token and invite endpoints, as strict models (unknown fields are errors)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from verifier.constants import INVITE_MAX_AGENTS, INVITE_TTL, INVITE_TTL_MAX, TOKEN_TTL, TOKEN_TTL_MAX
from verifier.formats.base import Handle, Strict

Reason = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"\S")]


class RevokeRequest(Strict):
    """POST /tokens/{handle}/revoke."""

    reason: Reason | None = None


class RotateRequest(Strict):
    """POST /tokens/{handle}/rotate: the new token lives `expires_s` (default 90 days)."""

    expires_s: int | None = Field(default=None, ge=1, le=int(TOKEN_TTL_MAX.total_seconds()),
                                  description=f"lifetime of the new token (default {TOKEN_TTL.days} days)")


class InviteRequest(Strict):
    """POST /projects/{slug}/invites: a one-time code for an operator and their agents."""

    operator: Handle
    agents: int = Field(default=1, ge=0, le=INVITE_MAX_AGENTS)
    expires_s: int | None = Field(default=None, ge=1, le=int(INVITE_TTL_MAX.total_seconds()),
                                  description=f"how long the code may be used (default {INVITE_TTL.days} days)")


class JoinRequest(Strict):
    """POST /join: redeem an invite code; `agents` names the agents (the rest get default names)."""

    code: Annotated[str, StringConstraints(pattern=r"^rwi_[A-Za-z0-9_-]{43}$")]
    agents: list[Handle] = Field(default_factory=list, max_length=INVITE_MAX_AGENTS)
