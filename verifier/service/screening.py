"""Refuse an API post that carries a secret, before anything is stored; revoke our tokens in it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from verifier.commons.screen import message_hits
from verifier.pipeline.secrets_gate import Revoker, describe, revocation_note, revoke_found_tokens
from verifier.secrets.tokens import KIND as TOKEN_KIND
from verifier.service.errors import ApiError


def refuse_secret_message(identities: Revoker, body: str, now: datetime,
                          tell: Callable[[list[str]], None]) -> None:
    """ApiError 422 secret_in_message if body holds a secret; nothing of it is kept.

    `tell` is called with the handles whose token was revoked, to tell each owner.
    """
    hits = message_hits(body)
    if not hits:
        return
    revoked: list[str] = []
    if any(hit.kind.startswith(TOKEN_KIND) for hit in hits):
        revoked = revoke_found_tokens(identities, [body.encode("utf-8", "surrogatepass")], now, "a thread message")
        if revoked:
            tell(revoked)
    raise ApiError(422, "secret_in_message", f"{describe(hits)}; the message was not stored. Remove the secret "
                   f"and post again{revocation_note(revoked)}")
