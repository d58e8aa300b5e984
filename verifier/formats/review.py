"""Reviews (reviews/<ab>/<review_id>.yaml): accept, reject or amend one finding or one link,
with a reason that has a visible character (the one reason rule, verifier.text.visible). The
review leaf's payload holds the object and its source only."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, StringConstraints, model_validator

from verifier.formats.base import NonEmpty, Strict, Text, parse_yaml_model
from verifier.text.visible import has_visible_text

Decision = Literal["accept", "reject", "amend"]
ReviewId = Annotated[str, StringConstraints(pattern=r"^rev_[0-9a-f]{16}$")]


def _visible(value: str) -> str:
    if not has_visible_text(value):
        raise ValueError("a reason needs at least one visible character (not only spaces or invisible ones)")
    return value


Reason = Annotated[NonEmpty, AfterValidator(_visible)]


class Amendment(Strict):
    """What the reviewer would change; only fields of the reviewed object's type."""

    statement: Text | None = None
    limitation: Text | None = None
    stance: Literal["supports", "contradicts", "context"] | None = None
    rationale: Text | None = None


class Review(Strict):
    review_id: ReviewId
    object_path: str
    object_id: str
    decision: Decision
    reason: Reason
    amendment: Amendment | None = None
    leaf_id: str

    @model_validator(mode="after")
    def _amend_needs_amendment(self) -> Review:
        if (self.decision == "amend") != (self.amendment is not None):
            raise ValueError("an amendment is given exactly when decision is amend")
        return self


def parse_review(data: bytes | str, where: str) -> Review:
    return parse_yaml_model(Review, data, where)
