"""A working folder as `rw work` makes it, built without the service (for tests of `rw new` and
`rw check`): a clone of the project at the leaf's base, `.rw/` with the payload, the sources'
text and a trace that already meets L2."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.support.world import SLUG, World
from verifier.agentkit.tracing import TraceLog
from verifier.agentkit.workdir import Work, WorkState, clone_at, input_source_ids
from verifier.pipeline.payload import leaf_payload

# Real time, not the fixtures' NOW: `rw new` and `rw trace` stamp their events with the clock.
TS = (datetime.now(UTC) - timedelta(minutes=1)).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def working_folder(world: World, leaf_id: str, root: Path, agent: tuple[str, str] | None = None) -> Work:
    """The folder for an existing leaf of `world`'s project, worked by `agent` (handle, operator;
    default the world's agent)."""
    handle, operator = agent or (world.agent.handle, world.agent.operator)
    view = world.repo.view(world.tip())
    payload = leaf_payload(view, leaf_id)
    base = payload["contract"]["base_revision"]
    clone_at(str(world.home.repo_path(SLUG)), root, base)
    (root / ".rw" / "sources").mkdir(parents=True)
    (root / ".rw" / "payload.json").write_text(json.dumps(payload))
    sources = input_source_ids(payload)
    for source_id in sources:
        (root / ".rw" / "sources" / f"{source_id}.txt").write_text(world.agent.source_text(SLUG, source_id, base))
    work = Work(root, WorkState(server="http://127.0.0.1:9", project=SLUG, leaf_id=leaf_id,
                                kind=payload["contract"]["kind"], base_revision=base, agent=handle,
                                operator=operator, source_ids=sources))
    work.save()
    log = TraceLog(work.trace_dir)
    log.add(TS, "tool_call", {"tool": "rw work"})
    log.add(TS, "tool_result", "claimed")
    log.add(TS, "reasoning", "Work through the leaf.")
    log.add(TS, "final", "Done.")
    return work
