"""An agent that crashed mid-leaf, on the record (design §11: "Agent crash mid-leaf: ledger row
crash with reason"): one `submit` row with outcome `crash` and reason code `agent_crash`, landed
through the project's one writer like every other row.

The row closes nothing: no leaf result is written, so the leaf stays open and returns to the pool
once its claim is released or expires. It names the worker agent and its operator, the leaf, its
kind and base, and why (exit code, signal, limit); it carries no trace (none was submitted) and
no patch.
"""

from __future__ import annotations

from datetime import datetime

from verifier.formats.entries import SubmitEntry
from verifier.formats.ledger import Cost, LedgerRow
from verifier.pipeline.writer import ProjectWriter
from verifier.state.project import ProjectView
from verifier.store.home import Home
from verifier.store.identities import Actor

AGENT_CRASH = "agent_crash"


def record_agent_crash(home: Home, slug: str, leaf_id: str, actor: Actor, reason: str, *, now: datetime,
                       duration_s: float | None = None, model: str | None = None,
                       skill_version: str | None = None) -> LedgerRow:
    """Land the crash row of `actor`'s run on `leaf_id`; returns the row."""
    with ProjectWriter.open(home, slug) as writer:
        contract = ProjectView(writer.view()).contract(leaf_id)
        entry = SubmitEntry(at=now, outcome="crash", reason_code=AGENT_CRASH, description=reason[:4000],
                            leaf_id=leaf_id, kind=contract.kind if contract else None, actor=actor.handle,
                            actor_type=actor.type, operator=actor.operator,
                            base_revision=contract.base_revision if contract else None,
                            cost=Cost(duration_s=round(duration_s, 3) if duration_s is not None else None),
                            model=model, skill_version=skill_version)
        return writer.land(entry).row
