"""hypotheses/H<n>.md: a hypothesis, its resolution criterion and its verdicts (design §3.5)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from verifier.formats.base import Day, Strict, Text, Timestamp, no_items, parse_front_matter_model
from verifier.formats.project import HypothesisId

HypothesisStatus = Literal["loose", "active", "resolved"]
VerdictValue = Literal["true", "false", "unresolved", "none"]


class Resolution(Strict):
    criterion: Text
    check_date: Day
    measure: Text


class Actor(Strict):
    type: Literal["agent", "human", "resolver", "verifier", "baseline"]
    id: str


class Verdict(Strict):
    value: VerdictValue = "none"
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)
    by: Actor | None = None
    at: Timestamp | None = None


class VerdictBlock(Strict):
    current: Verdict = Field(default_factory=Verdict)
    history: list[Verdict] = Field(default_factory=no_items)


class Baseline(Strict):
    sealed: str


class Hypothesis(Strict):
    hypothesis_id: HypothesisId
    revision: int = Field(ge=1)
    statement: Text
    resolution: Resolution | None = None
    status: HypothesisStatus = "loose"
    verdict: VerdictBlock = Field(default_factory=VerdictBlock)
    baseline: Baseline | None = None
    imported_from: str | None = None

    @model_validator(mode="after")
    def _active_needs_resolution(self) -> Hypothesis:
        if self.status in ("active", "resolved") and self.resolution is None:
            raise ValueError(
                f"a hypothesis with status {self.status} needs resolution.criterion, "
                "resolution.check_date and resolution.measure"
            )
        return self


def parse_hypothesis(data: bytes | str, where: str) -> tuple[Hypothesis, str]:
    return parse_front_matter_model(Hypothesis, data, where)
