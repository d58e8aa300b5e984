"""What became of each trace: one entry per traced ledger row, and the rules over those entries. Pure.

The maintainer samples traces by (leaf kind, outcome) and the runner schedules the maintainer by
how many leaves of a kind ended since its last pass; both read these entries, never the ledger
directly. An entry is one JSON line, so the index is append-only and read from its tail.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass

from verifier.errors import FormatError
from verifier.formats.ledger import LedgerRow
from verifier.formats.skill import SKILL_KINDS

OUTCOMES = ("accepted", "held", "rejected", "crash")
# Leaves that "ended" for scheduling: the design counts accepted or rejected leaves (crashes are
# the verifier's failures, held leaves are still waiting for a person).
ENDED = ("accepted", "rejected")
DEFAULT_EVERY = 20


@dataclass(frozen=True)
class OutcomeEntry:
    """One traced attempt: which trace, which project and leaf, and how it ended."""

    trace_id: str
    project: str
    seq: int
    at: str
    leaf_id: str
    kind: str
    outcome: str
    reason_code: str | None
    description: str
    skill_version: str | None

    def line(self) -> bytes:
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"

    @property
    def stratum(self) -> tuple[str, str]:
        return (self.kind, self.outcome)


def entry_from_row(project: str, row: LedgerRow) -> OutcomeEntry | None:
    """The entry for a ledger row, or None for rows without a leaf trace (init, holds, people)."""
    if row.action != "submit" or not row.trace_id or not row.leaf_id or row.kind not in SKILL_KINDS:
        return None
    return OutcomeEntry(
        trace_id=row.trace_id, project=project, seq=row.seq, at=row.at.isoformat(), leaf_id=row.leaf_id,
        kind=str(row.kind), outcome=row.outcome, reason_code=row.reason_code, description=row.description,
        skill_version=row.skill_version,
    )


def parse_entry(line: bytes, where: str) -> OutcomeEntry:
    try:
        value = json.loads(line)
        return OutcomeEntry(**value)
    except (ValueError, TypeError) as exc:
        raise FormatError(f"not an outcome entry: {exc}", where) from exc


def counts(entries: Iterable[OutcomeEntry]) -> dict[str, dict[str, int]]:
    """How many entries per kind and outcome."""
    table: dict[str, dict[str, int]] = {}
    for entry in entries:
        row = table.setdefault(entry.kind, {})
        row[entry.outcome] = row.get(entry.outcome, 0) + 1
    return table


def ended(table: Mapping[str, Mapping[str, int]], kind: str) -> int:
    return sum(table.get(kind, {}).get(outcome, 0) for outcome in ENDED)


def kinds_due(now_counts: Mapping[str, Mapping[str, int]], at_last_pass: Mapping[str, Mapping[str, int]],
              every: Mapping[str, int]) -> list[str]:
    """The kinds with at least N (per kind, `every`) accepted or rejected leaves since the last pass."""
    due = []
    for kind in SKILL_KINDS:
        threshold = every.get(kind, DEFAULT_EVERY)
        if threshold > 0 and ended(now_counts, kind) - ended(at_last_pass, kind) >= threshold:
            due.append(kind)
    return due
