"""A recorded controlled-arm worker: `python tests/support/arm_worker.py RECORDED.json`.

It replays, for its arm (RW_ARM), the leaves a recorded run wrote and the links it submitted, in
the scratch home it is given (RW_HOME, RW_TOKEN, RW_ARM_PROJECT, RW_NOW), through the real
verifier. Its leaves ask for the level the arm asks (RW_ARM_TRACE_LEVEL, `arm_leaf`), and it records
each trace at the level the leaf's payload asks for (`trace_level`), with its starting context at L3.
RECORDED.json: {"single": [{"leaf_id", "hypothesis", "links": [[finding_id, stance]]}],
"swarm": [...]}; an arm with "fail": true exits 3 without doing anything.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from verifier.agentkit import served
from verifier.agentkit.bundle import TraceRecorder
from verifier.agentkit.objects import link_file, note_file
from verifier.agentkit.workspace import creation_patch
from verifier.evaluation.arm_run import arm_leaf
from verifier.formats.leaf import LeafContract
from verifier.pipeline.payload import leaf_payload
from verifier.pipeline.submit import Submission, submit
from verifier.state.layout import default_write_rules
from verifier.store.fetcher import OfflineFetcher
from verifier.store.home import Home
from verifier.wiring import open_home
from verifier.writes.project import add_leaf


def link_leaf(home: Home, slug: str, leaf: dict[str, Any], token: str, now: datetime) -> str:
    repo = home.project(slug)
    contract = LeafContract.model_validate({
        "leaf_id": leaf["leaf_id"], "kind": "link", "base_revision": repo.tip(), "check": "link",
        "inputs": {"hypothesis_id": leaf["hypothesis"], "hypothesis_revision": 1},
        "may_write": [rule.model_dump() for rule in default_write_rules("link")],
        "created_at": now, "created_by": "planner", "expires_at": now + timedelta(days=1)})
    if os.environ.get("RW_ARM_TRACE_LEVEL"):
        contract = arm_leaf(contract)
    add_leaf(home, slug, contract, now=now, actor="planner",
             disjoint=False)  # replays leaves on one source one after another
    files: dict[str, bytes] = {}
    for finding_id, stance in leaf["links"]:
        path, data = link_file(finding_id=finding_id, hypothesis_id=leaf["hypothesis"], revision=1, stance=stance,
                               rationale=f"The finding {stance} the hypothesis.", leaf_kind="link",
                               leaf_id=leaf["leaf_id"])
        files[path] = data
    if all(stance != "contradicts" for _, stance in leaf["links"]):
        view = repo.view(repo.tip())
        searched = sorted(path.rsplit("/", 1)[1][:-5] for path in view.walk("sources") if path.endswith(".yaml"))[:3]
        files.update([note_file(leaf_id=leaf["leaf_id"], hypothesis_id=leaf["hypothesis"], revision=1,
                                none_found_after=len(searched), sources_checked=searched)])
    actor = home.identities.authenticate(token)
    patch = creation_patch(files)
    payload = leaf_payload(repo.view(repo.tip()), leaf["leaf_id"])
    level = served.trace_level_asked(payload) or "L1"
    trace = TraceRecorder()
    if level != "L1":
        trace.add(now - timedelta(seconds=4), "reasoning", f"Linking {len(leaf['links'])} recorded findings.")
    trace.add(now - timedelta(seconds=3), "tool_call", {"tool": "write", "files": sorted(files)})
    trace.add(now - timedelta(seconds=2), "tool_result", "ok")
    trace.add(now - timedelta(seconds=1), "final", "Linked the findings.")
    bundle = trace.bundle(leaf_id=leaf["leaf_id"], agent=actor.handle, operator=actor.operator,
                          base_revision=repo.tip() or "", patch=patch, level=level,
                          context=json.dumps(payload, sort_keys=True) if level == "L3" else None)
    verdict = submit(home, Submission(slug, leaf["leaf_id"], patch, bundle, token), now=now,
                     fetcher=OfflineFetcher())
    return verdict.line()


def main() -> int:
    recorded = json.loads(Path(sys.argv[1]).read_text())[os.environ["RW_ARM"]]
    if isinstance(recorded, dict) and recorded.get("fail"):
        print("this recorded run failed", file=sys.stderr)
        return 3
    home = open_home(Path(os.environ["RW_HOME"]))
    now = datetime.fromisoformat(os.environ["RW_NOW"].replace("Z", "+00:00"))
    for leaf in recorded:
        print(link_leaf(home, os.environ["RW_ARM_PROJECT"], leaf, os.environ["RW_TOKEN"], now))
    return 0


if __name__ == "__main__":
    sys.exit(main())
