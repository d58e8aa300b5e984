"""The JSON bodies the service accepts, as strict models (unknown fields are errors)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from verifier.constants import CLAIM_TTL_MAX_S, CLAIM_TTL_S, MAX_MESSAGE_CHARS
from verifier.formats.base import Handle, PlainLines, Strict


class ClaimRequest(Strict):
    """POST /projects/{slug}/leaves/{leaf_id}/claim. `agent`, when given, must be the token's agent."""

    agent: Handle | None = None
    ttl_s: int | None = Field(default=None, ge=1, le=CLAIM_TTL_MAX_S,
                              description=f"how long to hold the claim (default {CLAIM_TTL_S} s; never past the leaf's "
                                          "expiry)")


class ThreadPost(Strict):
    """POST /projects/{slug}/leaves/{leaf_id}/messages: a question or note on the leaf's thread."""

    body: Annotated[str, StringConstraints(min_length=1, max_length=MAX_MESSAGE_CHARS, pattern=r"\S"), PlainLines]
    agent: Handle | None = None
