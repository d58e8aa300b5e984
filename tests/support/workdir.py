"""A working folder as `rw work` makes it, built without the service (for tests of `rw new` and
`rw check`): a clone of the project at the leaf's base, `.rw/` with the payload, the sources'
text and a trace that already meets L2."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.support.world import SLUG, World
from verifier.agentkit.served import leaf_payload as served_leaf
from verifier.agentkit.tracing import TraceLog
from verifier.agentkit.workdir import Work, WorkState, clone_at
from verifier.formats.leaf import parse_leaf
from verifier.pipeline.payload import leaf_payload
from verifier.state.layout import leaf_path

# Real time, not the fixtures' NOW: `rw new` and `rw trace` stamp their events with the clock.
TS = (datetime.now(UTC) - timedelta(minutes=1)).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def working_folder(world: World, leaf_id: str, root: Path, agent: tuple[str, str] | None = None) -> Work:
    """The folder for an existing leaf of `world`'s project, worked by `agent` (handle, operator;
    default the world's agent)."""
    handle, operator = agent or (world.agent.handle, world.agent.operator)
    view = world.repo.view(world.tip())
    payload = leaf_payload(view, leaf_id)
    contract = parse_leaf(view.read(leaf_path(leaf_id)) or b"", leaf_path(leaf_id))
    base = contract.base_revision
    clone_at(str(world.home.repo_path(SLUG)), root, base)
    (root / ".rw" / "sources").mkdir(parents=True)
    (root / ".rw" / "payload.json").write_text(json.dumps(payload))
    sources = served_leaf(payload, leaf_id).source_ids
    for source_id in sources:
        (root / ".rw" / "sources" / f"{source_id}.txt").write_text(world.agent.source_text(SLUG, source_id, base))
    work = Work(root, WorkState(server="http://127.0.0.1:9", project=SLUG, leaf_id=leaf_id,
                                kind=contract.kind, base_revision=base, agent=handle,
                                operator=operator, source_ids=sources))
    work.save()
    log = TraceLog(work.trace_dir)
    log.add(TS, "tool_call", {"tool": "rw work"})
    log.add(TS, "tool_result", "claimed")
    log.add(TS, "reasoning", "Work through the leaf.")
    log.add(TS, "final", "Done.")
    return work
