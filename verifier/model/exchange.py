"""What a backend hands back: the answer bytes as received, how long it took, who answered, what it cost."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from verifier.model.prices import Usage


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Exchange:
    """What a backend returns: the answer bytes exactly as received, and how long it took."""

    answer: bytes
    duration_s: float
    detail: str  # the command that ran, the recorded file that answered, or the provider and model
    model: str | None = None  # the model the provider says answered (None: the backend cannot tell)
    usage: Usage | None = None  # tokens and cost, when the backend reports them
