"""Plans (plans/<plan_id>.md) and reports (reports/<report_id>.md): Markdown with front matter
that names the objects they cite and, for reports, the objects they introduced."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints, field_validator

from verifier.formats.base import Handle, Strict, Text, Timestamp, no_items, parse_front_matter_model
from verifier.formats.leaf import LeafContract
from verifier.formats.project import HypothesisId

DocumentId = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{2,63}$")]
ObjectRef = Annotated[str, StringConstraints(pattern=r"^(fnd|lnk|src)_[0-9a-f]{16}$")]


class Plan(Strict):
    plan_id: DocumentId
    hypotheses: list[HypothesisId] = Field(default_factory=no_items)
    leaves: list[str] = Field(default_factory=no_items)
    decisions: list[Text] = Field(default_factory=no_items)
    cites: list[ObjectRef] = Field(default_factory=no_items)
    author: Handle
    created_at: Timestamp
    # A held plan's leaf contracts (the Planner's, docs/planner.md): written to leaves/ after a
    # person approves the plan, and only if their sha256 is the one its `plan` ledger row names.
    waiting: list[LeafContract] = Field(default_factory=no_items)

    @field_validator("cites", "hypotheses", "leaves")
    @classmethod
    def _unique(cls, value: list[str]) -> list[str]:
        return _no_repeats(value)


class Report(Strict):
    report_id: DocumentId
    title: Text
    hypotheses: list[HypothesisId] = Field(default_factory=no_items)
    introduced: list[ObjectRef] = Field(default_factory=no_items)
    cites: list[ObjectRef] = Field(default_factory=no_items)
    author: Handle
    created_at: Timestamp

    @field_validator("cites", "introduced", "hypotheses")
    @classmethod
    def _unique(cls, value: list[str]) -> list[str]:
        return _no_repeats(value)


def _no_repeats(value: list[str]) -> list[str]:
    """Each object is cited once: a repeated citation would count its weight again."""
    repeated = sorted({item for item in value if value.count(item) > 1})
    if repeated:
        raise ValueError(f"{repeated[0]} is listed more than once")
    return value


def parse_plan(data: bytes | str, where: str) -> tuple[Plan, str]:
    return parse_front_matter_model(Plan, data, where)


def parse_report(data: bytes | str, where: str) -> tuple[Report, str]:
    return parse_front_matter_model(Report, data, where)
