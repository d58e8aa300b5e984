"""Refused attempts keep their bundle only in a bounded per-agent quarantine, oldest evicted, so
no agent can fill the disk with refusals; accepted attempts keep theirs in the store."""

from __future__ import annotations

import os
import time

from tests.support.hostile import traced_submission
from tests.support.world import World
from verifier.constants import QUARANTINE_PER_AGENT


def _outside_write_set(index: int) -> bytes:
    path = f"notes/n{index}.md"
    return (f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
            "@@ -0,0 +1 @@\n+x\n").encode()


def _stored(world: World) -> list[str]:
    root = world.home.root / "traces"
    return sorted(path.name for path in root.iterdir() if path.name.startswith("trc_")) if root.exists() else []


def test_refused_bundles_are_quarantined_with_a_quota(world: World) -> None:
    world.leaf("hostile-1")
    refused: list[str] = []
    for index in range(QUARANTINE_PER_AGENT + 3):
        verdict = world.submit(traced_submission(world, "hostile-1", _outside_write_set(index)))
        assert verdict.outcome == "rejected" and verdict.rejections[0].code == "outside_write_set", verdict.line()
        assert verdict.trace_id is not None
        refused.append(verdict.trace_id)
        held = world.home.root / "traces" / ".quarantine" / "agent-a" / verdict.trace_id
        stamp = time.time() - 1000 + index  # distinct ages even on a coarse clock; older than "now"
        os.utime(held, (stamp, stamp))
    assert _stored(world) == []
    assert world.home.traces.quarantined("agent-a") == sorted(refused[-QUARANTINE_PER_AGENT:])


def test_an_accepted_bundle_stays_in_the_store(world: World) -> None:
    world.leaf("extract-1")
    verdict = world.submit(world.extract("extract-1"))
    assert verdict.outcome == "accepted" and verdict.trace_id in _stored(world)
    assert world.home.traces.quarantined("agent-a") == []
