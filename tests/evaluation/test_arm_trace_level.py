"""L3 for the controlled arm (issue 24 point 5, design §3.10): a leaf the arm writes (`arm_leaf`)
asks for an L3 trace in its contract and its payload, and the verifier refuses an attempt on it
whose bundle meets less, with `trace_level`; an L3 attempt on it is judged as any other."""

from __future__ import annotations

from pathlib import Path

from tests.support.trace_levels import attempt_at_level, extract_contract
from tests.support.world import NOW, SLUG, World, make_world
from verifier.evaluation.arm_run import arm_leaf
from verifier.formats.leaf import parse_leaf
from verifier.pipeline.payload import leaf_payload
from verifier.state.layout import leaf_path
from verifier.writes.project import add_leaf


def _arm_leaf(world: World, leaf_id: str) -> None:
    add_leaf(world.home, SLUG, arm_leaf(extract_contract(world, leaf_id)), now=NOW, actor="planner", disjoint=False)


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
    verdict = world.submit(attempt_at_level(world, "extract-arm-b", "L2"))
    assert verdict.outcome == "rejected"
    assert [r.code for r in verdict.rejections] == ["trace_level"]
    assert "asks for an L3 trace (its contract's trace_level" in verdict.rejections[0].message


def test_an_l3_trace_on_an_arm_leaf_is_accepted(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    _arm_leaf(world, "extract-arm-c")
    assert world.submit(attempt_at_level(world, "extract-arm-c", "L3")).outcome == "accepted"
