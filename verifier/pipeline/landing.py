"""What a landing is made of: the contribution, its commit message, and what landed.

`ProjectWriter.land` (pipeline.writer) writes them. An accepted contribution is one commit,
authored by the agent and committed by the verifier, with the trailers Operator, Leaf, Trace and
Verifier-Version; it holds exactly the routed patch. A second, verifier-authored commit on top
appends the ledger row (and any bookkeeping file, such as the leaf's result). Every attempt,
rejected ones too, gets that ledger commit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from verifier.formats.ledger import LedgerRow
from verifier.store.gitrepo import Person


@dataclass(frozen=True)
class Contribution:
    writes: Mapping[str, bytes | None]
    author: Person
    subject: str
    body: str = ""
    trailers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Landed:
    row: LedgerRow
    commit: str | None  # the contribution commit, if any
    tip: str  # the branch tip after landing (the ledger commit)
    line: bytes | None = None  # the exact ledger line of `row`


def message(subject: str, body: str, trailers: dict[str, str]) -> str:
    """A commit message: subject, optional body, then git trailers."""
    parts = [subject.strip().splitlines()[0][:200] if subject.strip() else "(no subject)"]
    if body.strip():
        parts.append(body.strip())
    if trailers:
        parts.append("\n".join(f"{key}: {value}" for key, value in trailers.items()))
    return "\n\n".join(parts) + "\n"
