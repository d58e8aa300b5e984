"""Benchmark: one Wiki Maintainer pass over a store of 1,000 and of 10,000 traces.

Each store is a real home: one project whose ledger holds one traced row per stored trace (mixed
leaf kinds and outcomes, three recurring rejection codes) and the trace bundles in the trace store.
The outcome index is brought up to date first (the runner's `due_for_maintenance` hook does that as
leaves land; its cold build is printed too), then a pass is timed: refresh (nothing new), sampling
from the strata's tails, reading the sampled bundles, root-cause grouping, rendering, and one
ops-wiki commit. Sampling bounds the work, so the pass should cost about the same at both sizes.
Last line: one JSON object with pass_1k_ms, pass_10k_ms and ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from verifier.formats.ids import trace_id_for
from verifier.formats.ledger import LedgerRow, Outcome, row_hash, row_line
from verifier.formats.trace import TraceManifest, TraceRecord, bundle_digest
from verifier.pipeline.ledger import ledger_head
from verifier.roles.maintainer import run_pass
from verifier.roles.traceindex import TraceIndex
from verifier.state.layout import segment_path
from verifier.store.gitrepo import VERIFIER
from verifier.store.home import Home, Settings
from verifier.wiring import open_home
from verifier.writes.project import init_project

ROOT = Path(__file__).resolve().parent.parent
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
SLUG = "world-model-eval"
KINDS = ("extract", "extract", "extract", "scout", "skeptic", "link")
CODES = ("excerpt_not_found", "finding_count", "write_set")
TOOLS = ("rw source text", "read", "write")


def _outcome(number: int) -> tuple[Outcome, str | None]:
    slot = number % 20
    if slot < 11:
        return "rejected", CODES[number % 3]
    if slot < 18:
        return "accepted", None
    return ("held", None) if slot == 18 else ("crash", "crash")


def _bundle(number: int, kind: str, base: str) -> dict[str, bytes]:
    manifest = {"leaf_id": f"{kind}-{number:06d}", "agent": "agent-a", "operator": "op-a", "base_revision": base,
                "skill_version": "sk-000000000000", "level": "L2"}
    events: list[dict[str, object]] = [{"ts": "2026-11-30T11:00:00Z", "type": "reasoning", "content": f"leaf {number}"}]
    events += [{"ts": "2026-11-30T11:00:01Z", "type": "tool_call", "content": {"tool": tool}} for tool in TOOLS]
    events += [{"ts": "2026-11-30T11:00:02Z", "type": "tool_result", "content": "ok"},
               {"ts": "2026-11-30T11:00:03Z", "type": "final", "content": "done"}]
    return {"manifest.json": json.dumps(manifest).encode(),
            "events.jsonl": b"".join(json.dumps(e).encode() + b"\n" for e in events),
            "patch.diff": f"diff --git a/x{number} b/x{number}\n".encode()}


def build_store(root: Path, count: int) -> Home:
    """A home with `count` traces and one traced ledger row each, written in one ledger commit."""
    open_home(root).save_settings(Settings(durable=False, fetch="offline"))
    home = open_home(root)
    init_project(home, SLUG, now=NOW, template=ROOT / "fixtures" / "demo-project")
    repo = home.project(SLUG)
    tip = repo.tip()
    assert tip is not None
    seq, prev = ledger_head(repo.view(tip))
    segments: dict[str, bytes] = {segment_path(0): repo.view(tip).read(segment_path(0)) or b""}
    for number in range(count):
        kind = KINDS[number % len(KINDS)]
        outcome, code = _outcome(number)
        files = _bundle(number, kind, tip)
        digest = bundle_digest(files)
        manifest = TraceManifest.model_validate_json(files["manifest.json"])
        home.traces.put(TraceRecord(trace_id_for(digest), digest, manifest, "L2", 0), files)
        row = LedgerRow(seq=seq, prev=prev, at=NOW - timedelta(seconds=count - number), action="submit",
                        outcome=outcome, reason_code=code, description=f"findings/ab/fnd_{number:016x}.yaml: {code}",
                        leaf_id=manifest.leaf_id, kind=kind, actor="agent-a", actor_type="agent", operator="op-a",
                        base_revision=tip, trace_id=trace_id_for(digest), verifier_version="bench",
                        skill_version="sk-000000000000")
        line = row_line(row)
        path = segment_path(seq)
        segments[path] = segments.get(path, b"") + line
        seq, prev = seq + 1, row_hash(line)
    tree = repo.build_tree(tip, segments)
    commit = repo.create_commit(tree=tree, parents=[tip], author=VERIFIER, committer=VERIFIER,
                                message="bench ledger\n", when=NOW)
    repo.move_branch(commit, tip)
    return home


def measure(root: Path, count: int, repeats: int) -> tuple[float, float, dict[str, int]]:
    home = build_store(root, count)
    started = time.perf_counter()
    TraceIndex(home).refresh()
    cold_ms = (time.perf_counter() - started) * 1000
    times = []
    sampled: dict[str, int] = {}
    for _ in range(repeats):
        started = time.perf_counter()
        report = run_pass(home, now=NOW)
        times.append((time.perf_counter() - started) * 1000)
        sampled = {"traces": sum(report.sampled.values()), "pages": len(report.written)}
    return statistics.median(times), cold_ms, sampled


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="rw-bench-loop-") as scratch:
        for count in (1_000, 10_000):
            median, cold, sampled = measure(Path(scratch) / f"home-{count}", count, args.repeats)
            results[count] = median
            print(f"{count:>6} traces: maintainer pass {median:8.1f} ms (median of {args.repeats}); "
                  f"sampled {sampled['traces']} traces, {sampled['pages']} pages; cold index build {cold:8.1f} ms",
                  file=sys.stderr)
    ratio = results[10_000] / results[1_000]
    print(json.dumps({"pass_1k_ms": round(results[1_000], 1), "pass_10k_ms": round(results[10_000], 1),
                      "ratio": round(ratio, 2)}))


if __name__ == "__main__":
    main()
