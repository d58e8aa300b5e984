"""leaves/<leaf_id>.yaml: the contract of one typed leaf (design §5.3), and
leaves/<leaf_id>.result.json: how it closed.

The Planner (for now `rw leaf add`) writes the contract; the verifier reads it on every
submission. It names the kind, the pinned inputs, the base revision the work is against, the
paths the leaf may write (as typed rules, see checks.writeset) and when it expires. The verifier
writes the result when a submission of the leaf lands (accepted or held), and replay rebuilds it
byte for byte from the ledger row.
"""

import json
from typing import Annotated, Literal, Self

from pydantic import Field, StringConstraints, ValidationError, model_validator

from verifier.errors import FormatError
from verifier.formats.base import CommitId, Handle, Strict, Text, Timestamp, iso, no_items, parse_yaml_model
from verifier.formats.outcome import Outcome
from verifier.formats.project import HypothesisId
from verifier.formats.source import SourceId

LeafKind = Literal["scout", "extract", "skeptic", "link", "review", "guide"]
LEAF_KINDS: tuple[LeafKind, ...] = ("scout", "extract", "skeptic", "link", "review", "guide")
LeafId = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{2,63}$")]
TraceLevel = Literal["L1", "L2", "L3"]
WriteOp = Literal["create", "modify", "delete", "write"]
Glob = Annotated[str, StringConstraints(min_length=1, max_length=256)]


class WriteRule(Strict):
    """One may_write rule: an operation (write = any of create, modify, delete) on a glob.

    Globs match one path segment at a time: `*` stays inside a segment, `**` spans segments.
    """

    op: WriteOp
    path: Glob


class LeafInputs(Strict):
    source_id: SourceId | None = None
    hypothesis_id: HypothesisId | None = None
    hypothesis_revision: int | None = Field(default=None, ge=1)
    gap: Text | None = None
    finding_ids: list[str] = Field(default_factory=no_items)
    object_path: str | None = None


_REQUIRED_INPUTS: dict[str, tuple[str, ...]] = {
    "extract": ("source_id",),
    "skeptic": ("hypothesis_id", "hypothesis_revision"),
    "link": ("hypothesis_id", "hypothesis_revision"),
    "review": ("object_path",),
    "scout": (),
    "guide": (),
}


class LeafContract(Strict):
    leaf_id: LeafId
    kind: LeafKind
    title: Text | None = None
    inputs: LeafInputs = Field(default_factory=LeafInputs)
    base_revision: CommitId
    may_write: list[WriteRule] = Field(min_length=1)
    check: LeafKind
    created_at: Timestamp
    created_by: Handle
    expires_at: Timestamp
    plan_id: str | None = None
    # A warm leaf (design §9.1): an extract leaf on a source known to yield findings, sized to
    # finish in under a minute, that a newcomer's agent can claim without knowing its id.
    warm: bool | None = None
    # The trace level every attempt must meet (design §3.10): the controlled arm's leaves ask for
    # L3 (verifier.evaluation.arm_run); a warm leaf asks for L3 without saying so here.
    trace_level: TraceLevel | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.check != self.kind:
            raise ValueError(f"check {self.check!r} does not match kind {self.kind!r}")
        if self.expires_at <= self.created_at:
            raise ValueError("expires_at must be after created_at")
        missing = [name for name in _REQUIRED_INPUTS[self.kind] if getattr(self.inputs, name) is None]
        if missing:
            raise ValueError(f"a {self.kind} leaf needs inputs.{', inputs.'.join(missing)}")
        return self


def parse_leaf(data: bytes | str, where: str) -> LeafContract:
    return parse_yaml_model(LeafContract, data, where)


class LeafResult(Strict):
    """leaves/<leaf_id>.result.json: the landing that closed the leaf."""

    leaf_id: LeafId
    outcome: Outcome  # accepted or held when written; the state now also depends on holds and reverts
    commit: CommitId | None
    actor: str
    operator: str | None
    trace_id: str | None
    at: Timestamp

    def dump(self) -> bytes:
        """The file's bytes: sorted keys, two-space indent, the timestamp in its one spelling."""
        body = {"leaf_id": self.leaf_id, "outcome": self.outcome, "commit": self.commit, "actor": self.actor,
                "operator": self.operator, "trace_id": self.trace_id, "at": iso(self.at)}
        return json.dumps(body, sort_keys=True, indent=2).encode() + b"\n"


def parse_leaf_result(data: bytes, where: str) -> LeafResult:
    try:
        return LeafResult.model_validate_json(data)
    except ValidationError as exc:
        raise FormatError(f"not a leaf result: {exc.errors()[0]['msg']} at {exc.errors()[0]['loc']}", where) from exc
