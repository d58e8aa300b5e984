"""Nothing secret is stored or shown by Commons: every message is scanned before it is stored. Pure.

A person's or agent's post through the API is refused outright when it carries a secret (the
service says so, with code `secret_in_message`, and revokes any bearer token of ours in it).
Messages the verifier composes quote text others wrote (a leaf title, a refusal's description);
one of those that carries a secret is stored withheld (`withhold`), so the notifier never stalls
on it and nothing secret reaches a public thread.
"""

from __future__ import annotations

import json
from dataclasses import replace

from verifier.commons.adapter import OutgoingMessage
from verifier.secrets import SecretHit, scan_bytes

WITHHELD = "(withheld: this message quoted text that held a secret)"


def message_hits(body: str, data: dict[str, object] | None = None) -> list[SecretHit]:
    """Secrets in a message's body and in its structured data."""
    hits = scan_bytes(body.encode("utf-8", "surrogatepass"), name="body")
    if data:
        hits += scan_bytes(json.dumps(data, sort_keys=True, default=str).encode("utf-8", "surrogatepass"),
                           name="data")
    return hits


def withhold(message: OutgoingMessage) -> OutgoingMessage:
    """The message as it may be stored: itself, or a withheld notice in its place."""
    if not message_hits(message.body, message.data):
        return message
    return replace(message, body=WITHHELD, data={})
