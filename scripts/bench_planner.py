"""Benchmark: one Planner wake beside `rw digest` on the same project.

The project: 10,000 findings, 500 sources, 50 hypotheses (all with a criterion, a check date and a
measure), 2,000 links, 400 accepted extract leaves and 2,000 ledger rows. The digest is the
in-process call behind `rw digest` and `GET /projects/{slug}/digest` (median of three); the wake
is one `rw planner wake` (read the state, decide, land the plan and its leaves, post the tasks
to the local Commons). Target: ratio = wake / digest <= 3, a wake costs about as much as reading
the state once.

The project is left as the product leaves one: `rw init` records why the template's active
hypotheses are not sealed (no model here; writes.followups), and every scoring landing keeps the
index of what rests on what (scoring.rests). The corpus is written by one plumbing landing for
speed, so that index is built for it once, before the clock starts, and timed on its own
(index_ms): without it the first wake would pay that one-time build (a project from before the
index) rather than a wake's cost. Last line: one JSON object with wake_ms, digest_ms, ratio,
leaves, index_ms.
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

from verifier import VERSION
from verifier.agentkit.objects import finding_file, link_file, source_files
from verifier.formats.entries import SubmitEntry
from verifier.formats.leaf import LeafContract, LeafResult
from verifier.formats.ledger import LedgerRow, row_hash, row_line
from verifier.formats.yamlout import dump_yaml
from verifier.pipeline.digest import digest
from verifier.pipeline.ledger import ledger_head
from verifier.pipeline.writer import ProjectWriter
from verifier.roles.planner import local_commons, wake
from verifier.scoring.rests import RestIndex
from verifier.state.layout import default_write_rules, leaf_path, leaf_result_path, segment_path
from verifier.store.gitrepo import VERIFIER
from verifier.store.home import Anchor, Home, Settings
from verifier.text.extract import extract_text
from verifier.wiring import open_home
from verifier.writes.followups import seal_after_landing
from verifier.writes.project import init_project

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
SLUG = "bench-planner"


def sentence(source: int, index: int) -> str:
    return (f"In quarter {index % 4 + 1} of 2026, vendor {source % 17} reported {source * 37 + index * 11} "
            f"paying teams for product {source}-{index}, up {index % 9 + 1}.{source % 10}% on the quarter before.")


def project_md(hypotheses: int) -> str:
    ids = ", ".join(f"H{n}" for n in range(1, hypotheses + 1))
    return (f"---\nproject: {SLUG}\nsteward: stew\nbudget_per_loop: {{ leaves_max: 40 }}\nhypotheses: [ {ids} ]\n"
            "---\nBenchmark project.\n")


def hypothesis_md(number: int) -> str:
    return (f"---\nhypothesis_id: H{number}\nrevision: 1\nstatement: \"Benchmark statement {number}.\"\n"
            "resolution:\n  criterion: \"Something measurable.\"\n  check_date: 2027-12-31\n"
            "  measure: \"A public record.\"\nstatus: active\n---\n")


def build(home: Home, *, sources: int, per_source: int, hypotheses: int, links: int, rows: int) -> float:
    """Build the project; returns the seconds its index of what rests on what took to build and land."""
    template = Path(tempfile.mkdtemp(prefix="rw-bench-planner-"))
    (template / "PROJECT.md").write_text(project_md(hypotheses))
    (template / "hypotheses").mkdir()
    for number in range(1, hypotheses + 1):
        (template / "hypotheses" / f"H{number}.md").write_text(hypothesis_md(number))
    init_project(home, SLUG, now=NOW, template=template)
    seal_after_landing(home, SLUG, now=NOW)  # as `rw init` does: the "not sealed" rows, once
    repo = home.project(SLUG)
    files: dict[str, bytes] = {}
    findings: list[str] = []
    extract_leaves: list[str] = []
    for index in range(sources):
        text = " ".join(sentence(index, k) for k in range(per_source)) + "\n"
        made = source_files(url=f"https://bench.example.org/source/{index}", data=text.encode(),
                            media_type="text/plain", fetched_by="bench", retrieved_at=NOW, language="en",
                            rights="public", published=None, title=None, leaf_id=None, status="included")
        files.update(made)
        source_id = next(path for path in made if path.endswith(".yaml")).rsplit("/", 1)[1][:-5]
        derived = extract_text(text.encode(), "text/plain")
        leaf_id = f"extract-bench-{index:04d}"
        for k in range(per_source):
            path, data = finding_file(source_id=source_id, source_text=derived, excerpt=sentence(index, k),
                                      statement=f"Claim {k} of source {index}.", limitation="Synthetic.",
                                      leaf_id=leaf_id)
            files[path] = data
            findings.append(path.rsplit("/", 1)[1][:-5])
        if index < sources * 4 // 5:  # most sources were extracted by a leaf that was accepted
            contract = LeafContract.model_validate({
                "leaf_id": leaf_id, "kind": "extract", "inputs": {"source_id": source_id}, "base_revision": repo.tip(),
                "may_write": [r.model_dump() for r in default_write_rules("extract")], "check": "extract",
                "created_at": NOW, "created_by": "planner", "expires_at": NOW + timedelta(days=7)})
            files[leaf_path(leaf_id)] = dump_yaml(contract.model_dump(mode="json", exclude_none=True))
            files[leaf_result_path(leaf_id)] = LeafResult(leaf_id=leaf_id, outcome="accepted", commit=None,
                                                          actor="bench", operator="bench", trace_id=None,
                                                          at=NOW).dump()
            extract_leaves.append(leaf_id)
    for number in range(links):
        hypothesis = number % hypotheses + 1
        # Half the hypotheses have a contradicts link already; the other half still need a skeptic.
        stance = "contradicts" if number % 3 == 2 and hypothesis <= hypotheses // 2 else "supports"
        path, data = link_file(finding_id=findings[number * 3 % len(findings)], hypothesis_id=f"H{hypothesis}",
                               revision=1, stance=stance, rationale="Synthetic link.", leaf_kind="link",
                               leaf_id="link-bench")
        files[path] = data
    with ProjectWriter.open(home, SLUG) as writer:
        writer.land(SubmitEntry(at=NOW, action="human", actor="bench", actor_type="verifier",
                                description="benchmark corpus"), bookkeeping=files)
    begun = time.perf_counter()
    with ProjectWriter.open(home, SLUG) as writer:
        rests = RestIndex(writer.view().read)
        rests.rebuild(writer.view())
        writer.land(SubmitEntry(at=NOW, action="human", actor="bench", actor_type="verifier",
                                description="benchmark corpus: what rests on what"), bookkeeping=rests.writes())
    index_s = time.perf_counter() - begun
    add_rows(home, rows, extract_leaves)
    home.upkeep.wait_idle()  # the corpus packed (verifier.store.upkeep) before anything is timed
    return index_s


def add_rows(home: Home, rows: int, leaves: list[str]) -> None:
    """Ledger rows up to `rows`, hash-chained, as one verifier commit (accepted and rejected attempts)."""
    repo = home.project(SLUG)
    tip = repo.tip()
    assert tip is not None
    view = repo.view(tip)
    seq, prev = ledger_head(view)
    segments: dict[str, bytes] = {}
    for number in range(seq, rows):
        rejected = number % 5 == 0
        row = LedgerRow(seq=number, prev=prev, at=NOW, action="submit", outcome="rejected" if rejected else "accepted",
                        reason_code="excerpt_not_found" if rejected else None, leaf_id=leaves[number % len(leaves)],
                        kind="extract", actor="bench-agent", actor_type="agent", operator="bench-op",
                        verifier_version=VERSION, description="synthetic attempt")
        line = row_line(row)
        path = segment_path(number)
        segments[path] = segments.get(path, view.read(path) or b"") + line
        prev = row_hash(line)
    tree = repo.build_tree(tip, dict(segments))
    commit = repo.create_commit(tree=tree, parents=[tip], author=VERIFIER, committer=VERIFIER,
                                message="bench: ledger rows\n", when=NOW)
    repo.move_branch(commit, tip)
    # The synthetic rows are written in one plumbing commit for speed; anchor it as the writer would,
    # so the Planner's writer (which checks tip, anchor and ledger head) takes it as the project's state.
    home.write_anchor(SLUG, Anchor(rows - 1, prev, commit))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sources", type=int, default=500)
    parser.add_argument("--per-source", type=int, default=20)
    parser.add_argument("--hypotheses", type=int, default=50)
    parser.add_argument("--links", type=int, default=2000)
    parser.add_argument("--rows", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rw-bench-planner-home-") as scratch:
        home = open_home(Path(scratch))
        home.save_settings(Settings(durable=False, fetch="offline"))
        home = open_home(Path(scratch))
        started = time.perf_counter()
        index_s = build(home, sources=args.sources, per_source=args.per_source, hypotheses=args.hypotheses,
              links=args.links, rows=args.rows)
        print(f"project built in {time.perf_counter() - started:.1f}s: {args.sources} sources, "
              f"{args.sources * args.per_source} findings, {args.hypotheses} hypotheses, {args.links} links, "
              f"{args.rows} ledger rows; its index of what rests on what in {index_s * 1000:.0f} ms", file=sys.stderr)
        digests = []
        for _ in range(3):
            begun = time.perf_counter()
            digest(home, SLUG, NOW)
            digests.append(time.perf_counter() - begun)
        digest_s = statistics.median(digests)
        commons = local_commons(home)
        begun = time.perf_counter()
        result = wake(home, SLUG, NOW, commons=commons, force=True)
        wake_s = time.perf_counter() - begun
        begun = time.perf_counter()
        again = wake(home, SLUG, NOW + timedelta(hours=1), commons=commons, force=True)
        again_s = time.perf_counter() - begun
    leaves = len(result.plan.leaves) if result.plan else 0
    kinds: dict[str, int] = {}
    for contract in result.plan.leaves if result.plan else []:
        kinds[contract.kind] = kinds.get(contract.kind, 0) + 1
    print(f"digest          {digest_s * 1000:8.0f} ms (median of 3)")
    print(f"wake            {wake_s * 1000:8.0f} ms  {leaves} leaves {kinds}")
    print(f"wake again      {again_s * 1000:8.0f} ms  {len(again.plan.leaves) if again.plan else 0} leaves "
          "(the leaves the budget deferred)")
    print(json.dumps({"wake_ms": round(wake_s * 1000, 1), "digest_ms": round(digest_s * 1000, 1),
                      "ratio": round(wake_s / digest_s, 2), "leaves": leaves,
                      "index_ms": round(index_s * 1000, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
