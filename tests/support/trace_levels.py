"""Set-up shared by the trace-level tests (a leaf that asks for an L3 trace, and an attempt on it
whose bundle meets a given level): an extract contract on the world's note, and that attempt."""

from __future__ import annotations

from datetime import timedelta

from tests.support.world import NOTE_ID, NOW, SLUG, World
from verifier.agentkit.bundle import TraceRecorder
from verifier.agentkit.workspace import creation_patch
from verifier.formats.leaf import LeafContract
from verifier.pipeline.submit import Submission
from verifier.state.layout import default_write_rules


def extract_contract(world: World, leaf_id: str, *, warm: bool = False) -> LeafContract:
    """An open extract leaf on the world's note, based at its tip, written by the Planner."""
    fields: dict[str, object] = {
        "leaf_id": leaf_id, "kind": "extract", "inputs": {"source_id": NOTE_ID}, "base_revision": world.tip(),
        "may_write": [r.model_dump() for r in default_write_rules("extract")], "check": "extract",
        "created_at": NOW, "created_by": "planner", "expires_at": NOW + timedelta(days=1)}
    if warm:
        fields["warm"] = True
    return LeafContract.model_validate(fields)


def attempt_at_level(world: World, leaf_id: str, level: str) -> Submission:
    """The world's agent's findings for the leaf, with a trace bundle at `level` (an L3 one also
    states its context)."""
    files = world.findings(leaf_id)
    patch = creation_patch(files)
    trace = TraceRecorder()
    trace.add(NOW - timedelta(seconds=4), "reasoning", "Three sentences that carry the claims, quoted exactly.")
    trace.add(NOW - timedelta(seconds=3), "tool_call", {"tool": "write", "files": sorted(files)})
    trace.add(NOW - timedelta(seconds=2), "tool_result", "ok")
    trace.add(NOW - timedelta(seconds=1), "final", "Wrote the findings.")
    bundle = trace.bundle(leaf_id=leaf_id, agent=world.agent.handle, operator=world.agent.operator,
                          base_revision=world.tip(), patch=patch, level=level,
                          context="The payload and the skill." if level == "L3" else None)
    return Submission(SLUG, leaf_id, patch, bundle, world.agent.token)
