"""The plain inputs of the evaluation: ledger rows, use scores, resolutions and validation results,
as values (never changed once made) with no git, disk or clock in them. `history.py` reads them
from a project tree.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated

from pydantic import BeforeValidator, Field

from verifier.errors import FormatError
from verifier.formats.base import Strict, validate
from verifier.formats.ledger import LedgerRow
from verifier.scoring.resolution import Finding, Link, Resolution, Review

ACCEPTED = ("accepted", "held")  # passed the verifier; a held object waits only for a person's gate
UNDISCLOSED = "undisclosed"  # the group of rows whose manifest named no model or skill version
UNKNOWN_KIND = "unknown"  # an agent submission's kind when neither its row nor its leaf says it
EVIDENCE_KINDS = ("link", "skeptic")  # leaf kinds whose acceptance moves a hypothesis's evidence


@dataclass(slots=True)
class Attempt:
    """One ledger row as the evaluation reads it: a value, never changed once made.

    Not a frozen dataclass, for speed alone: a frozen one's __init__ goes through
    object.__setattr__ for each of its 19 fields, 2.5 us a row against 0.3 us for plain slot
    writes (measured), on every row of every ledger `rw eval --all` reads. Nothing assigns to an
    Attempt after it is made; `dataclasses.replace` makes a new one.
    """

    project: str
    seq: int
    at: datetime
    action: str
    outcome: str
    reason_code: str | None = None
    leaf_id: str | None = None
    kind: str | None = None
    actor: str = ""
    actor_type: str = "agent"
    operator: str | None = None
    model: str | None = None
    skill_version: str | None = None
    usd: float | None = None
    tokens: int | None = None
    objects: tuple[str, ...] | None = None
    claimed_at: datetime | None = None  # when the submitting agent's claim began (None: never claimed)
    # Worked out once here: every metric asks, over every row.
    accepted: bool = field(init=False, compare=False)
    is_agent_submission: bool = field(init=False, compare=False)

    def __post_init__(self) -> None:
        self.accepted = self.outcome in ACCEPTED
        self.is_agent_submission = self.action == "submit" and self.actor_type == "agent" and self.kind is not None


def attempt_of(project: str, row: LedgerRow) -> Attempt:
    # Positional, in Attempt's field order: a dataclass pays for each keyword on every row.
    cost = row.cost
    return Attempt(project, row.seq, row.at, row.action, row.outcome, row.reason_code, row.leaf_id, row.kind,
                   row.actor, row.actor_type, row.operator, row.model, row.skill_version, cost.usd, cost.tokens,
                   None if row.objects is None else tuple(row.objects), row.claimed_at)


@dataclass(frozen=True)
class ResolvedHypothesis:
    """One decided resolution record, as the pure scoring module's inputs."""

    resolution: Resolution
    decided_at: datetime | None
    links: tuple[Link, ...] = ()
    reviews: tuple[Review, ...] = ()
    findings: tuple[Finding, ...] = ()


@dataclass(frozen=True)
class ProjectHistory:
    """What one project's repository says, read at one tree (the tip, or replay's rebuild)."""

    project: str
    rows: tuple[Attempt, ...]
    use: Mapping[str, float] = field(default_factory=dict)  # object id -> U; withdrawn objects 0
    resolutions: tuple[ResolvedHypothesis, ...] = ()
    unresolved_count: int | None = None  # scores/planner.json; None when the Planner never counted
    unsealed: tuple[tuple[str, str], ...] = ()  # (hypothesis, why) active without a sealed baseline
    # When each leaf was opened, from its contract's created_at (a Planner leaf lands in a `plan`
    # row, not a `leaf` row): read for the accepted leaves whose submission names no claim.
    opened: Mapping[str, datetime] = field(default_factory=dict)


class ValidationCost(Strict):
    usd: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    tokens: int | None = Field(default=None, ge=0)


def _none_is_empty(value: object) -> object:
    return {} if value is None else value


class ValidationResult(Strict):
    """One validation run of one skill version (written by the improvement loop's gate).

    `objects` is how many objects the accepted validation leaves brought (the denominator of cost
    per accepted object); `cost.usd` is the run's total, null when the worker did not disclose it.
    """

    skill_version: str = Field(min_length=1, max_length=64)
    validation_set: str | None = Field(default=None, max_length=200)
    attempts: int = Field(ge=0)
    accepted: int = Field(ge=0)
    objects: int | None = Field(default=None, ge=0)
    # null is "nothing disclosed", as {} is (docs/eval.md).
    cost: Annotated[ValidationCost, BeforeValidator(_none_is_empty)] = Field(default_factory=ValidationCost)


class ValidationFile(Strict):
    version: int = Field(default=1, ge=1, le=1)
    results: list[ValidationResult]


def parse_validation(data: bytes, where: str) -> list[ValidationResult]:
    """The validation results file (docs/eval.md); a clear error names what is wrong and where."""
    try:
        value = json.loads(data)
    except ValueError as exc:
        raise FormatError(f"not JSON: {exc}", where) from exc
    parsed = validate(ValidationFile, value, where)  # names the field at fault
    for number, result in enumerate(parsed.results):
        if result.accepted > result.attempts:
            raise FormatError(f"results[{number}]: {result.accepted} accepted out of {result.attempts} attempts",
                              where)
    return parsed.results
