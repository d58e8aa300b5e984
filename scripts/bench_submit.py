"""Benchmark: end-to-end `submit` of an extract leaf on a project of 10,000 findings and 500
sources, beside the bare git CLI doing only the apply and commit of the same patch.

The verifier side is the in-process pipeline call that `rw submit` and the service make
(authenticate, trace ingest with secret scan, parse, write set, apply, extract check, land, ledger,
anchor). The git side, for the same patch on the same base: `git read-tree` into a temporary
index (apply --cached needs one), `git apply --cached`, `git write-tree`, `git commit-tree`,
`git update-ref`. Neither side fsyncs (git's default); a second verifier run with fsync on is
reported beside it. Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from verifier.agentkit.bundle import TraceRecorder
from verifier.agentkit.objects import finding_file, source_files
from verifier.agentkit.workspace import creation_patch
from verifier.formats.entries import SubmitEntry
from verifier.formats.leaf import LeafContract, LeafInputs
from verifier.pipeline.submit import Submission, submit
from verifier.pipeline.writer import ProjectWriter
from verifier.state.layout import default_write_rules
from verifier.store.fetcher import OfflineFetcher
from verifier.store.home import Home, Settings
from verifier.text.extract import extract_text
from verifier.wiring import open_home
from verifier.writes.project import add_leaf, init_project

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
SLUG = "bench"
VENDORS = ["Tessellate", "Quillmark", "Kestrel", "Northgate", "Aurora", "Basalt", "Cobalt", "Drift"]


def sentence(source: int, index: int) -> str:
    vendor = VENDORS[(source + index) % len(VENDORS)]
    return (f"In quarter {index % 4 + 1} of 2026, {vendor} reported {source * 37 + index * 11} paying teams "
            f"for layer product {source}-{index}, up {index % 9 + 1}.{source % 10}% on the quarter before.")


def build_corpus(home: Home, sources: int, findings_per_source: int, sentences: int) -> list[tuple[str, str]]:
    """Create the project with `sources` sources and sources*findings_per_source findings."""
    template = Path(tempfile.mkdtemp(prefix="rw-bench-template-"))
    (template / "PROJECT.md").write_text(f"---\nproject: {SLUG}\n---\nBenchmark project.\n")
    init_project(home, SLUG, now=NOW, template=template)
    files: dict[str, bytes] = {}
    catalogue: list[tuple[str, str]] = []
    for index in range(sources):
        text = " ".join(sentence(index, k) for k in range(sentences)) + "\n"
        made = source_files(url=f"https://bench.example.org/source/{index}", data=text.encode(),
                            media_type="text/plain", fetched_by="bench", retrieved_at=NOW, language="en",
                            rights="public", published=None, title=None, leaf_id=None, status="included")
        files.update(made)
        source_id = next(path for path in made if path.endswith(".yaml")).rsplit("/", 1)[1][:-5]
        derived = extract_text(text.encode(), "text/plain")
        catalogue.append((source_id, derived))
        for k in range(findings_per_source):
            path, data = finding_file(source_id=source_id, source_text=derived, excerpt=sentence(index, k),
                                      statement=f"Claim {k} of source {index}.", limitation="Synthetic.",
                                      leaf_id="bench-corpus")
            files[path] = data
    with ProjectWriter.open(home, SLUG) as writer:
        writer.land(SubmitEntry(at=NOW, action="human", actor="bench", actor_type="verifier",
                                description=f"benchmark corpus: {sources} sources, "
                                            f"{sources * findings_per_source} findings"), bookkeeping=files)
    home.upkeep.wait_idle()  # the corpus packed (verifier.store.upkeep) before anything is timed
    return catalogue


def extract_submission(home: Home, token: str, leaf_id: str, source_id: str, text: str, source_index: int,
                       first: int, count: int) -> Submission:
    repo = home.project(SLUG)
    files = dict(
        finding_file(source_id=source_id, source_text=text, excerpt=sentence(source_index, k),
                     statement=f"New claim {k}.", limitation="Synthetic benchmark finding.", leaf_id=leaf_id)
        for k in range(first, first + count)
    )
    patch = creation_patch(files)
    trace = TraceRecorder()
    trace.add(NOW - timedelta(seconds=9), "reasoning", "Read the source, pick quotable sentences.")
    trace.add(NOW - timedelta(seconds=8), "tool_call", {"tool": "rw source text", "args": [SLUG, source_id]})
    trace.add(NOW - timedelta(seconds=7), "tool_result", text[:2000])
    trace.add(NOW - timedelta(seconds=1), "final", f"{count} findings, each quoted exactly.")
    tip = repo.tip()
    assert tip is not None
    bundle = trace.bundle(leaf_id=leaf_id, agent="bench-agent", operator="bench-op", base_revision=tip,
                          patch=patch, level="L2")
    return Submission(SLUG, leaf_id, patch, bundle, token)


def git(repo: Path, *args: str, env: dict[str, str] | None = None, stdin: bytes | None = None) -> str:
    result = subprocess.run(["git", *args], cwd=repo, env=env, input=stdin, capture_output=True, check=True)
    return result.stdout.decode().strip()


def time_git(bare: Path, base: str, patch: bytes, number: int) -> float:
    index = bare / f"bench-index-{number}"
    env = {**os.environ, "GIT_DIR": str(bare), "GIT_INDEX_FILE": str(index),
           "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "b@x"}
    patch_file = bare / f"bench-{number}.diff"
    patch_file.write_bytes(patch)
    start = time.perf_counter()
    git(bare, "read-tree", base, env=env)
    git(bare, "apply", "--cached", str(patch_file), env=env)
    tree = git(bare, "write-tree", env=env)
    commit = git(bare, "commit-tree", tree, "-p", base, "-m", "bench", env=env)
    git(bare, "update-ref", f"refs/bench/{number}", commit, env=env)
    elapsed = time.perf_counter() - start
    index.unlink(missing_ok=True)
    patch_file.unlink()
    return elapsed


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def run(home_dir: Path, *, durable: bool, sources: int, per_source: int, rounds: int,
        with_git: bool) -> tuple[list[float], list[float]]:
    home = open_home(home_dir)
    home.save_settings(Settings(durable=durable, fetch="offline"))
    home = open_home(home_dir)
    started = time.perf_counter()
    catalogue = build_corpus(home, sources, per_source, per_source + 5)
    print(f"  corpus built in {time.perf_counter() - started:.1f}s (durable={durable})", file=sys.stderr)
    token = home.identities.add("bench-agent", "bench-op", "agent", NOW)
    verifier_times: list[float] = []
    git_times: list[float] = []
    fetcher = OfflineFetcher()
    for number in range(rounds):
        source_index = number % sources
        source_id, text = catalogue[source_index]
        leaf_id = f"extract-{number:04d}"
        repo = home.project(SLUG)
        tip = repo.tip()
        assert tip is not None
        add_leaf(home, SLUG, LeafContract(
            leaf_id=leaf_id, kind="extract", inputs=LeafInputs(source_id=source_id),
            base_revision=tip, may_write=default_write_rules("extract"), check="extract",
            created_at=NOW, created_by="planner", expires_at=NOW + timedelta(days=1)), now=NOW, actor="planner",
            disjoint=False)  # a load generator: many leaves on one source at once
        submission = extract_submission(home, token, leaf_id, source_id, text, source_index, per_source, 5)
        base = repo.tip()
        assert base is not None
        if with_git:
            git_times.append(time_git(repo.path, base, submission.patch, number))
        start = time.perf_counter()
        verdict = submit(home, submission, now=NOW, fetcher=fetcher)
        verifier_times.append(time.perf_counter() - start)
        if verdict.outcome != "accepted":
            raise SystemExit(f"benchmark submission was not accepted: {verdict.line()}")
    return verifier_times, git_times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=500)
    parser.add_argument("--findings", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    per_source = max(1, args.findings // args.sources)
    with tempfile.TemporaryDirectory(prefix="rw-bench-") as scratch:
        print(f"project: {args.sources} sources, {args.sources * per_source} findings; {args.rounds} submissions")
        verifier, git_times = run(Path(scratch) / "fast", durable=False, sources=args.sources,
                                  per_source=per_source, rounds=args.rounds, with_git=True)
        durable, _ = run(Path(scratch) / "durable", durable=True, sources=args.sources,
                         per_source=per_source, rounds=max(10, args.rounds // 2), with_git=False)
    result = {
        "verifier_p50_ms": round(statistics.median(verifier) * 1000, 2),
        "verifier_p95_ms": round(percentile(verifier, 0.95) * 1000, 2),
        "git_p50_ms": round(statistics.median(git_times) * 1000, 2),
        "git_p95_ms": round(percentile(git_times, 0.95) * 1000, 2),
        "verifier_fsync_p50_ms": round(statistics.median(durable) * 1000, 2),
    }
    result["ratio"] = round(result["verifier_p50_ms"] / result["git_p50_ms"], 3)
    print(f"verifier submit: p50 {result['verifier_p50_ms']} ms, p95 {result['verifier_p95_ms']} ms")
    print(f"  with fsync on: p50 {result['verifier_fsync_p50_ms']} ms")
    print(f"bare git apply+commit: p50 {result['git_p50_ms']} ms, p95 {result['git_p95_ms']} ms")
    print(f"ratio (verifier p50 / git p50): {result['ratio']} (target <= 1.0)")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
