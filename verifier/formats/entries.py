"""What a writer of a project may ask the ledger to record: one model per kind of row.

The writer adds what only it knows (seq, prev, the contribution commit, the verifier version) and
turns an entry into a `LedgerRow`. Each kind fixes its `action` and narrows the outcomes and actor
types it may carry, so a caller cannot, say, record an `init` row by an agent.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import StringConstraints

from verifier.formats.base import CommitId, Strict, Timestamp
from verifier.formats.ledger import ActorType, Cost, Outcome

Description = Annotated[str, StringConstraints(max_length=4000)]


class _Entry(Strict):
    at: Timestamp
    outcome: Outcome = "accepted"
    reason_code: str | None = None
    description: Description = ""
    leaf_id: str | None = None
    kind: str | None = None
    actor: str
    actor_type: ActorType
    operator: str | None = None

    def row_fields(self) -> dict[str, object]:
        """The fields of the ledger row this entry becomes (without seq, prev, commit, version)."""
        return dict(self)


class InitEntry(_Entry):
    action: Literal["init"] = "init"
    outcome: Literal["accepted"] = "accepted"


class LeafEntry(_Entry):
    """A leaf contract written (the Planner, or a person's `rw leaf add`) or rewritten (the outage extension)."""

    action: Literal["leaf"] = "leaf"
    outcome: Literal["accepted"] = "accepted"
    actor_type: Literal["planner", "verifier", "human"]


class PlanEntry(_Entry):
    """A Planner wake: its plan (the contribution) and its new leaves, in one landing."""

    action: Literal["plan"] = "plan"
    outcome: Literal["accepted", "held"] = "accepted"
    actor_type: Literal["planner"] = "planner"


class SubmitEntry(_Entry):
    """An agent's submission against a leaf, or a person's edit (action `human`)."""

    action: Literal["submit", "human"] = "submit"
    base_revision: CommitId | None = None
    trace_id: str | None = None
    cost: Cost = Cost()
    model: Annotated[str, StringConstraints(max_length=200)] | None = None
    skill_version: Annotated[str, StringConstraints(max_length=64)] | None = None
    # The corpus objects an accepted or held leaf submission brought (docs/eval.md); None otherwise.
    objects: list[Annotated[str, StringConstraints(max_length=200)]] | None = None
    # When the submitting agent's claim on the leaf began (the service reads it); None unclaimed.
    claimed_at: Timestamp | None = None


class HoldEntry(_Entry):
    action: Literal["hold"] = "hold"
    outcome: Literal["accepted"] = "accepted"
    actor_type: Literal["human"] = "human"
    reason_code: Literal["approve", "reject"]


class RevertEntry(_Entry):
    action: Literal["revert"] = "revert"
    outcome: Literal["accepted"] = "accepted"
    actor_type: Literal["human", "resolver"] = "human"
    reason_code: Literal["revert"] = "revert"


class ResolveEntry(_Entry):
    """The Resolver's work: baselines sealed and opened, verdicts proposed and set."""

    action: Literal["resolve"] = "resolve"


class RepairEntry(_Entry):
    """A person put the branch back on a commit the ledger vouches for (`rw repair`)."""

    action: Literal["repair"] = "repair"
    outcome: Literal["accepted"] = "accepted"
    actor_type: Literal["human"] = "human"
    reason_code: Literal["repair"] = "repair"


LedgerEntry = InitEntry | LeafEntry | PlanEntry | SubmitEntry | HoldEntry | RevertEntry | ResolveEntry | RepairEntry
