"""An imported transcript's events are stripped as `rw trace add` strips them (issue 24): one scan
of the lines as they will be sent, then only the flagged events stripped and scanned again, so
every secret family is gone and the verifier's own ingest accepts the bundle."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.secret_cases import CASES, Case
from verifier.agentkit.tracing import TraceLog, clean_lines, event_line, marker
from verifier.agentkit.workspace import creation_patch
from verifier.pipeline.trace import inspect_bundle
from verifier.secrets import scan_bytes

TS = "2026-11-30T12:00:00Z"
PATCH = creation_patch({"findings/ab/fnd_abababababababab.yaml": b"finding_id: fnd_abababababababab\n"})
MANIFEST = {"leaf_id": "extract-1", "agent": "agent-a", "operator": "op-a", "base_revision": "a" * 40,
            "skill_version": "sk-0123456789ab"}


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_each_secret_family_in_an_imported_event_is_stripped_and_the_bundle_is_accepted(case: Case,
                                                                                         tmp_path: Path) -> None:
    log = TraceLog(tmp_path / "trace")
    recorded = log.add_many(TS, [("tool_call", {"tool": "Bash", "input": {"command": "env"}}),
                                 ("tool_result", {"tool": "Bash", "output": f"said {case.context} then"}),
                                 ("reasoning", f"I saw {case.context}"), ("final", "Done.")])
    assert case.kind in [kind for r in recorded for kind in r.stripped]
    bundle = log.bundle(MANIFEST, PATCH)
    assert case.value.encode() not in bundle["events.jsonl"]
    assert inspect_bundle(bundle, PATCH).level == "L2"  # the verifier's ingest, secret scan included


def test_an_unflagged_event_is_written_as_it_came_and_a_flagged_one_never_is() -> None:
    clean = {"ts": TS, "type": "tool_result", "content": {"tool": "Read", "output": "plain words"}}
    case = CASES[0]
    dirty = {"ts": TS, "type": "tool_result", "content": {"tool": "Bash", "output": case.context}}
    lines, found = clean_lines([clean, dirty])
    assert lines[0] == event_line(clean)
    assert case.kind in found and marker(case.kind).encode() in lines[1]
    assert not scan_bytes(b"".join(lines), name="events")
