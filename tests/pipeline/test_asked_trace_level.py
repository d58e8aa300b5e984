"""L3 when asked (issue 24 point 5, design §3.10): a warm leaf asks for an L3 trace in its payload,
and the verifier refuses an attempt on it whose bundle meets less, with `trace_level`; a leaf that
asks for nothing takes any level the bundle meets."""

from __future__ import annotations

from pathlib import Path

from tests.support.trace_levels import attempt_at_level, extract_contract
from tests.support.world import NOTE_ID, NOW, SLUG, World, make_world
from verifier.pipeline.payload import leaf_payload
from verifier.writes.project import add_leaf


def _warm_leaf(world: World, leaf_id: str) -> None:
    add_leaf(world.home, SLUG, extract_contract(world, leaf_id, warm=True), now=NOW, actor="planner", disjoint=False)


def test_a_warm_leaf_asks_for_l3_in_its_payload_and_a_plain_one_asks_nothing(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    _warm_leaf(world, "extract-warm-a")
    world.leaf("extract-plain-a")
    view = world.repo.view(world.tip())
    assert leaf_payload(view, "extract-warm-a")["trace_level"] == "L3"
    assert "trace_level" not in leaf_payload(view, "extract-plain-a")


def test_an_l2_trace_on_a_warm_leaf_is_refused_with_trace_level(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    _warm_leaf(world, "extract-warm-b")
    verdict = world.submit(attempt_at_level(world, "extract-warm-b", "L2"))
    assert verdict.outcome == "rejected"
    assert [r.code for r in verdict.rejections] == ["trace_level"]
    assert "asks for an L3 trace" in verdict.rejections[0].message


def test_an_l3_trace_on_a_warm_leaf_and_an_l2_trace_on_a_plain_leaf_are_judged_as_before(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    _warm_leaf(world, "extract-warm-c")
    assert world.submit(attempt_at_level(world, "extract-warm-c", "L3")).outcome == "accepted"
    world.leaf("extract-plain-c", source_id=NOTE_ID)
    plain = world.submit(attempt_at_level(world, "extract-plain-c", "L2"))
    assert "trace_level" not in [r.code for r in plain.rejections]
