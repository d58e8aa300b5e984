"""A crash at any durable step of landing leaves the project consistent: one crash row, no
contribution on the branch, the ledger chain and the anchor in agreement."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.support.world import SLUG, World
from verifier.audits.audit import verify_ledger
from verifier.formats.trace import TraceRecord
from verifier.pipeline.ledger import read_chain
from verifier.pipeline.trace import inspect_bundle


class BoomError(RuntimeError):
    pass


@pytest.fixture
def crash_at(world: World) -> list[str]:
    """Steps to crash at once each, through the crash point the home hands its writers."""
    armed: list[str] = []

    def hook(step: str) -> None:
        if step in armed:
            armed.remove(step)  # crash once; the crash row itself must land
            raise BoomError(f"injected crash before {step}")

    world.home.crash_point = hook
    return armed


@pytest.mark.parametrize("step", ["contribution", "ledger", "branch"])
def test_crash_leaves_only_a_crash_row(world: World, crash_at: list[str], step: str) -> None:
    world.leaf("extract-1")
    submission = world.extract("extract-1")
    tip = world.tip()
    crash_at.append(step)
    verdict = world.submit(submission)
    assert verdict.outcome == "crash" and "injected crash" in verdict.rejections[0].message
    assert world.repo.changed_paths(tip, world.tip()) == ["ledger/000000.jsonl"]
    last = [row for _, row in read_chain(world.repo.view(world.tip()))][-1]
    assert (last.outcome, last.commit) == ("crash", None)
    assert verify_ledger(world.repo, world.home.read_anchor(SLUG)).ok
    # The leaf is still open: the agent can submit again and land.
    assert world.submit(submission).outcome == "accepted"


def test_trace_id_collision_is_refused(world: World) -> None:
    world.leaf("extract-1")
    submission = world.extract("extract-1")
    record = inspect_bundle(submission.bundle, submission.patch)
    squatter: TraceRecord = replace(record, digest="f" * 64)
    world.home.traces.put(squatter, {"manifest.json": b"{}"})
    verdict = world.submit(submission)
    assert verdict.rejections[0].code == "trace_collision"
