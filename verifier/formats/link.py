"""Evidence links (links/<ab>/<link_id>.yaml): one finding joined to one hypothesis revision,
with a stance and a rationale; and the counter-evidence note a skeptic or link leaf writes when it
found nothing that contradicts (notes/<leaf_id>.yaml)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from verifier.formats.base import Strict, Text, no_items, parse_yaml_model
from verifier.formats.finding import FindingId
from verifier.formats.project import HypothesisId

Stance = Literal["supports", "contradicts", "context"]
LinkId = Annotated[str, StringConstraints(pattern=r"^lnk_[0-9a-f]{16}$")]
LinkLeafKind = Literal["skeptic", "link", "human"]


class Link(Strict):
    link_id: LinkId
    finding_id: FindingId
    hypothesis_id: HypothesisId
    hypothesis_revision: int = Field(ge=1)
    stance: Stance
    rationale: Text
    leaf_kind: LinkLeafKind
    leaf_id: str | None = None


class ScoutRequest(Strict):
    """A skeptic's request for a new scout leaf: what to look for, and why."""

    gap: Text
    why: Text | None = None


class CounterEvidenceNote(Strict):
    """The explicit "none found after N sources" note, with optional scout requests."""

    leaf_id: str
    hypothesis_id: HypothesisId
    hypothesis_revision: int = Field(ge=1)
    none_found_after: int = Field(ge=1, description="how many sources were searched for counter-evidence")
    sources_checked: list[Annotated[str, StringConstraints(pattern=r"^src_[0-9a-f]{16}$")]] = Field(
        default_factory=no_items
    )
    scout_requests: list[ScoutRequest] = Field(default_factory=no_items, max_length=5)


def parse_link(data: bytes | str, where: str) -> Link:
    return parse_yaml_model(Link, data, where)


def parse_note(data: bytes | str, where: str) -> CounterEvidenceNote:
    return parse_yaml_model(CounterEvidenceNote, data, where)
