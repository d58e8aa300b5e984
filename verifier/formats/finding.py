"""Findings: one exact excerpt from one source, the claim it supports and its limitation
(findings/<shard>/<finding_id>.yaml)."""

from typing import Annotated, Self

from pydantic import Field, StringConstraints, model_validator

from verifier.constants import MAX_EXCERPT_CHARS
from verifier.formats.base import Strict, Text, parse_yaml_model
from verifier.formats.source import SourceId

FindingId = Annotated[str, StringConstraints(pattern=r"^fnd_[0-9a-f]{16}$")]


class Location(Strict):
    """Where the excerpt sits: code-point offsets into the source's derived text
    (`rw source text`), end exclusive."""

    start: int = Field(ge=0)
    end: int = Field(ge=1)

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.end <= self.start:
            raise ValueError("end must be greater than start")
        return self


class Finding(Strict):
    finding_id: FindingId
    source_id: SourceId
    excerpt: Annotated[Text, StringConstraints(max_length=MAX_EXCERPT_CHARS)]
    location: Location
    statement: Text
    limitation: Text
    leaf_id: str


def parse_finding(data: bytes | str, where: str) -> Finding:
    return parse_yaml_model(Finding, data, where)
