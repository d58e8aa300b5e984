"""The secret gate for model answers: a model's text is untrusted, so every answer field that
would land (a Resolver rationale, a Planner goal or reason, a Wiki Maintainer diagnosis, a Skill
Proposer proposal, even an error about the call) is scanned before it lands.

`screen` is pure: the fields in, the fields that passed and what the scan found in the others
out. A finding names the field, the detector and the byte offset, never the text. The shells
then drop (or refuse) what failed and hand the failed texts to `revoke_in`, which revokes every
registered bearer token of ours in them, as for traces and patches (pipeline.secrets_gate).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from verifier.pipeline.secrets_gate import Revoker, describe, revoke_found_tokens
from verifier.secrets import SecretHit, scan_bytes
from verifier.secrets.tokens import KIND as TOKEN_KIND

SECRET_IN_ANSWER = "secret_in_answer"  # noqa: S105 - a reason code, not a password


@dataclass(frozen=True)
class Screened:
    """What the gate let through, and what it stopped (by field name)."""

    kept: dict[str, str]
    stopped: dict[str, list[SecretHit]] = field(default_factory=dict)
    texts: tuple[str, ...] = ()  # the stopped texts themselves, for `revoke_in`; never shown

    @property
    def clean(self) -> bool:
        return not self.stopped

    @property
    def tokens(self) -> bool:
        """Whether a bearer token of ours is among what was stopped."""
        return any(hit.kind.startswith(TOKEN_KIND) for hits in self.stopped.values() for hit in hits)

    def summary(self) -> str:
        """Which fields were stopped and why, without a character of their text."""
        return describe([hit for hits in self.stopped.values() for hit in hits])


def screen(fields: Mapping[str, str]) -> Screened:
    """Scan each field as the UTF-8 bytes that would land; a hit stops the whole field."""
    kept: dict[str, str] = {}
    stopped: dict[str, list[SecretHit]] = {}
    texts: list[str] = []
    for name, text in fields.items():
        hits = scan_bytes(text.encode("utf-8", "surrogatepass"), name=name)
        if hits:
            stopped[name] = hits
            texts.append(text)
        else:
            kept[name] = text
    return Screened(kept, stopped, tuple(texts))


def revoke_in(identities: Revoker, screened: Screened, now: datetime, where: str) -> list[str]:
    """Revoke every registered bearer token in what the gate stopped; returns whose."""
    if not screened.tokens:
        return []
    return revoke_found_tokens(identities, [t.encode("utf-8", "surrogatepass") for t in screened.texts], now, where)


def safe_text(text: str, *, name: str, instead: str) -> tuple[str, Screened]:
    """`text` if it passes the gate, else `instead` followed by what the scan found (no part of
    the text). For messages built from a model's output (errors, stderr tails) that may land."""
    screened = screen({name: text})
    return (text if screened.clean else f"{instead} ({screened.summary()})"), screened


def all_texts(screens: Iterable[Screened]) -> Screened:
    """Several screens as one (to revoke once)."""
    kept: dict[str, str] = {}
    stopped: dict[str, list[SecretHit]] = {}
    texts: list[str] = []
    for item in screens:
        kept.update(item.kept)
        stopped.update(item.stopped)
        texts += item.texts
    return Screened(kept, stopped, tuple(texts))
