"""The JSON bodies of a person's actions over HTTP (docs/api.md, "People"), as strict models:
unknown fields are errors, values are never coerced."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StringConstraints

from verifier.formats.base import Strict
from verifier.formats.leaf import LeafKind
from verifier.text.visible import reason_problem


def _visible(reason: str) -> str:
    """The one reason rule (verifier.text.visible), so that a blank reason and an invisible one
    are the same refusal, as in-process."""
    problem = reason_problem(reason)
    if problem is not None:
        raise ValueError(f"the action {problem}")
    return reason


# minLength for the published schema only: "" is refused by the one rule, with its words.
Reason = Annotated[str, StringConstraints(max_length=4000), AfterValidator(_visible),
                   Field(json_schema_extra={"minLength": 1})]
REVISION_PATTERN = r"^[0-9a-f]{4,40}$"  # a commit id, abbreviated or whole
Revision = Annotated[str, StringConstraints(pattern=REVISION_PATTERN)]
Text = Annotated[str, StringConstraints(min_length=1, max_length=400)]


class ReasonBody(Strict):
    """POST .../holds/{object_id}/approve|reject, .../verdicts/{hypothesis_id}/approve."""

    reason: Reason


class RevertBody(Strict):
    """POST /projects/{slug}/reverts: the contribution commit to revert, and why."""

    commit: Revision
    reason: Reason


class VerdictBody(Strict):
    """POST /projects/{slug}/verdicts/{hypothesis_id}: set or override a verdict."""

    verdict: Literal["true", "false", "unresolved"]
    confidence: float = Field(ge=0.0, le=1.0)
    reason: Reason


class LeafBody(Strict):
    """POST /projects/{slug}/leaves: a person's leaf (as `rw leaf add` takes it)."""

    kind: LeafKind
    leaf_id: Text | None = None
    source_id: Text | None = None
    hypothesis_id: Text | None = None
    revision: int | None = Field(default=None, ge=1)
    gap: Text | None = None
    object_path: Text | None = None
    finding_ids: list[Text] = Field(default_factory=list, max_length=100)
    base: Revision | None = None
    expires_in: Annotated[str, StringConstraints(pattern=r"^[1-9][0-9]{0,4}[smhd]$")] = "24h"
    title: Text | None = None


class RepairBody(Strict):
    """POST /projects/{slug}/repair: the ledger commit to put the branch back on, and why."""

    to: Revision
    reason: Reason


class WakeBody(Strict):
    """POST /projects/{slug}/planner/wake."""

    force: bool = False
    warm_only: bool = False


class EmptyBody(Strict):
    """POST /projects/{slug}/seal takes no fields."""
