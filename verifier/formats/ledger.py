"""The ledger: one JSON row per attempt, hash-chained, stored in segments under ledger/.

Each row is canonical JSON on one line. `prev` is the sha256 of the previous row's exact line
bytes (the genesis row's prev is 64 zeros), so a truncated, reordered or rewritten ledger breaks
the chain. Rows are grouped `ROWS_PER_SEGMENT` to a file, ledger/<seq // ROWS_PER_SEGMENT>.jsonl,
so an append rewrites one small blob, not the whole history.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, ValidationError

from verifier.errors import FormatError
from verifier.formats.base import CommitId, Sha256Hex, Strict, Timestamp, iso
from verifier.formats.outcome import Outcome as Outcome  # noqa: PLC0414 - re-exported: its home is here too

Action = Literal["init", "leaf", "submit", "human", "hold", "revert", "resolve", "repair", "plan"]
ActorType = Literal["agent", "human", "verifier", "resolver", "planner"]
ROWS_PER_SEGMENT = 256
GENESIS_PREV = "0" * 64


class Cost(Strict):
    tokens: int | None = Field(default=None, ge=0, le=10**12)
    usd: float | None = Field(default=None, ge=0, le=10**6, allow_inf_nan=False)
    duration_s: float | None = Field(default=None, ge=0, le=10**7, allow_inf_nan=False)


class LedgerRow(Strict):
    seq: int = Field(ge=0)
    prev: Sha256Hex
    at: Timestamp
    action: Action
    outcome: Outcome
    reason_code: str | None = None
    description: Annotated[str, StringConstraints(max_length=4000)] = ""
    leaf_id: str | None = None
    kind: str | None = None
    actor: str
    actor_type: ActorType
    operator: str | None = None
    base_revision: CommitId | None = None
    commit: CommitId | None = None
    trace_id: str | None = None
    verifier_version: str
    cost: Cost = Field(default_factory=Cost)
    # What the agent disclosed in its manifest (design §12 measures per model and skill version);
    # None when not disclosed or when the row is not an agent's submission.
    model: Annotated[str, StringConstraints(max_length=200)] | None = None
    skill_version: Annotated[str, StringConstraints(max_length=64)] | None = None
    # The ids of the corpus objects an accepted (or held) submission brought, sorted, so the
    # evaluation (docs/eval.md) can attribute each object's use and resolution credit to the leaf
    # kind, model and skill version that made it from the ledger alone. None on every other row.
    objects: list[Annotated[str, StringConstraints(max_length=200)]] | None = Field(default=None, max_length=100_000)
    # When the submitting agent claimed the leaf (the Commons' claim, read by the service as the
    # submission arrived), so time to accept runs from the claim (docs/eval.md). Left out of the
    # row's bytes when None, so every row written before the field hashes as it did.
    claimed_at: Timestamp | None = None


_LEFT_OUT_WHEN_NONE = ("claimed_at",)


def row_line(row: LedgerRow) -> bytes:
    """The canonical bytes of a row: sorted keys, no spaces, UTC timestamps, then a newline."""
    data = row.model_dump(mode="json")
    data["at"] = iso(row.at)
    for name in _LEFT_OUT_WHEN_NONE:
        if data.get(name) is None:
            data.pop(name, None)
    if row.claimed_at is not None:
        data["claimed_at"] = iso(row.claimed_at)
    line = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return line.encode() + b"\n"


def row_hash(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()


# The subject line of the verifier's ledger commit: "ledger: #<seq> <outcome> <action>[ <leaf>]".
_SUBJECT_PREFIX = "ledger: "
_SUBJECT_SEQ = re.compile(r"#(\d+)\b")


@dataclass(frozen=True)
class LedgerSubject:
    """What a ledger commit's subject says: the row's number, or None when it names none."""

    seq: int | None


def ledger_subject(row: LedgerRow) -> str:
    """The subject of the commit that carries `row` (parsed back by `parse_ledger_subject`)."""
    return f"{_SUBJECT_PREFIX}#{row.seq} {row.outcome} {row.action}" + (f" {row.leaf_id}" if row.leaf_id else "")


def parse_ledger_subject(message: str) -> LedgerSubject | None:
    """The ledger subject a commit message opens with, or None when it is no ledger commit's.
    Only the prefix decides: a ledger commit with a mangled number is still one (replay reports it)."""
    if not message.startswith(_SUBJECT_PREFIX):
        return None
    match = _SUBJECT_SEQ.match(message, len(_SUBJECT_PREFIX))
    return LedgerSubject(int(match.group(1)) if match else None)


def parse_row(line: bytes, where: str) -> LedgerRow:
    """One row from its line. The model reads the JSON bytes itself first (13 us a row against 20
    for json.loads then validation: every reader of a ledger pays it on every row, `rw eval --all`
    on 100,000); a line it refuses so is read the plain way, which decides, with its own error
    (json.loads also reads NaN, a byte-order mark or UTF-16, which the model's reader refuses).
    tests/formats/test_ledger_row_reading.py holds both ways to one answer on good and bad lines."""
    try:
        return LedgerRow.model_validate_json(line)
    except ValidationError:
        pass
    try:
        value = json.loads(line)
        return LedgerRow.model_validate(value)
    except (ValueError, ValidationError) as exc:
        raise FormatError(f"not a ledger row: {exc}", where) from exc


def parse_segment(data: bytes, where: str) -> list[tuple[bytes, LedgerRow]]:
    """Split a segment into (exact line bytes, row); every line must end with a newline."""
    if data and not data.endswith(b"\n"):
        raise FormatError("segment does not end with a newline (truncated write?)", where)
    lines = data.split(b"\n")[:-1] if data else []
    return [(line + b"\n", parse_row(line, f"{where}:{n}")) for n, line in enumerate(lines, 1)]
