"""L3 for the controlled arm (issue 24 point 5, design §3.10): a leaf the arm writes (`arm_leaf`)
asks for an L3 trace in its contract and its payload, and the verifier refuses an attempt on it
whose bundle meets less, with `trace_level`; an L3 attempt on it is judged as any other."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from tests.support.world import NOTE_ID, NOW, SLUG, World, make_world
from verifier.agentkit.bundle import TraceRecorder
from verifier.agentkit.workspace import creation_patch
from verifier.evaluation.arm_run import arm_leaf
from verifier.formats.leaf import LeafContract, parse_leaf
from verifier.pipeline.payload import leaf_payload
from verifier.pipeline.submit import Submission
from verifier.state.layout import default_write_rules, leaf_path
from verifier.writes.project import add_leaf


def _arm_leaf(world: World, leaf_id: str) -> None:
    contract = LeafContract.model_validate({
        "leaf_id": leaf_id, "kind": "extract", "inputs": {"source_id": NOTE_ID}, "base_revision": world.tip(),
        "may_write": [r.model_dump() for r in default_write_rules("extract")], "check": "extract",
        "created_at": NOW, "created_by": "planner", "expires_at": NOW + timedelta(days=1)})
    add_leaf(world.home, SLUG, arm_leaf(contract), now=NOW, actor="planner", disjoint=False)


def _attempt(world: World, leaf_id: str, level: str) -> Submission:
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


def test_an_arm_leaf_asks_for_l3_in_its_contract_and_its_payload(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    _arm_leaf(world, "extract-arm-a")
    view = world.repo.view(world.tip())
    data = view.read(leaf_path("extract-arm-a"))
    assert data is not None and b"trace_level: L3" in data
    assert parse_leaf(data, leaf_path("extract-arm-a")).trace_level == "L3"
    assert leaf_payload(view, "extract-arm-a")["trace_level"] == "L3"


def test_an_l2_trace_on_an_arm_leaf_is_refused_with_trace_level(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    _arm_leaf(world, "extract-arm-b")
    verdict = world.submit(_attempt(world, "extract-arm-b", "L2"))
    assert verdict.outcome == "rejected"
    assert [r.code for r in verdict.rejections] == ["trace_level"]
    assert "asks for an L3 trace (its contract's trace_level" in verdict.rejections[0].message


def test_an_l3_trace_on_an_arm_leaf_is_accepted(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    _arm_leaf(world, "extract-arm-c")
    assert world.submit(_attempt(world, "extract-arm-c", "L3")).outcome == "accepted"
