"""Benchmark: landings per second of one project on the embedded backends, against a git host over
the network (`git daemon` on loopback: every landing a compare-and-swap push) and against the git
host plus traces in S3-compatible object storage (moto's server on loopback).

Same submissions as scripts/bench_submit.py (an extract leaf of 5 findings on a smaller corpus), fsync
off on every side. Last line: one JSON object with `embedded_p50_ms`, `git_host_p50_ms`,
`git_host_s3_p50_ms`, the landings per second per project each implies, and `s3_put_p50_ms`; then
the same project on the git host with `--writers` submitting at once (as a service's workers do):
`group_landings_per_s` and `pushes_per_landing` (landings queued behind one push go out together in
the next, verifier.deploy.publishing).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path

import boto3

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.support, from a fresh checkout
from bench_submit import NOW, SLUG, build_corpus, extract_submission

from tests.support.devservers import git_daemon, s3_server
from verifier.deploy.hosting import attach_remote
from verifier.formats.leaf import LeafContract, LeafInputs
from verifier.pipeline.submit import Submission, submit
from verifier.state.layout import default_write_rules
from verifier.store.backends import Backends, TracesBackend
from verifier.store.fetcher import OfflineFetcher
from verifier.store.home import Home, Settings
from verifier.wiring import open_home
from verifier.writes.project import add_leaf


def bench_home(home_dir: Path, backends: Backends, host: str | None, sources: int,
               per_source: int) -> tuple[Home, list[tuple[str, str]], str]:
    """A throwaway home with the corpus (on `host` when given): (home, catalogue, agent token)."""
    home = open_home(home_dir)
    home.save_settings(Settings(durable=False, fetch="offline", backends=backends))
    home = open_home(home_dir)
    catalogue = build_corpus(home, sources, per_source, per_source + 5)
    if host is not None:
        attach_remote(home, SLUG, host)
    return home, catalogue, home.identities.add("bench-agent", "bench-op", "agent", NOW)


def leaf_and_submission(home: Home, token: str, catalogue: list[tuple[str, str]], number: int, sources: int,
                        per_source: int) -> Submission:
    """Open extract leaf number `number` on the tip, and an accepted-to-be submission for it."""
    source_id, text = catalogue[number % sources]
    leaf_id = f"extract-{number:04d}"
    tip = home.project(SLUG).tip()
    assert tip is not None
    add_leaf(home, SLUG, LeafContract(
        leaf_id=leaf_id, kind="extract", inputs=LeafInputs(source_id=source_id), base_revision=tip,
        may_write=default_write_rules("extract"), check="extract", created_at=NOW, created_by="planner",
        expires_at=NOW + timedelta(days=1)), now=NOW, actor="planner",
        disjoint=False)  # a load generator: many leaves on one source at once
    return extract_submission(home, token, leaf_id, source_id, text, number % sources, per_source, 5)


def landings(home_dir: Path, backends: Backends, host: str | None, rounds: int, sources: int,
             per_source: int) -> list[float]:
    home, catalogue, token = bench_home(home_dir, backends, host, sources, per_source)
    times: list[float] = []
    for number in range(rounds):
        submission = leaf_and_submission(home, token, catalogue, number, sources, per_source)
        began = time.perf_counter()
        verdict = submit(home, submission, now=NOW, fetcher=OfflineFetcher())
        times.append(time.perf_counter() - began)
        if verdict.outcome != "accepted":
            raise SystemExit(f"not accepted: {verdict.line()}")
    return times


def group_landings(home_dir: Path, host: str, bare: Path, writers: int, rounds: int, sources: int,
                   per_source: int) -> tuple[float, float]:
    """`writers` threads submitting `rounds` leaves each to one project on the git host, all at
    once; (landings per second, pushes per landing) counted by the host's own hook."""
    home, catalogue, token = bench_home(home_dir, Backends(), host, sources, per_source)
    work = [leaf_and_submission(home, token, catalogue, number, sources, per_source)
            for number in range(writers * rounds)]
    pushes = bare / "pushes.log"
    hook = bare / "hooks" / "post-receive"
    hook.write_text(f"#!/bin/sh\ncat >/dev/null\necho push >> {pushes}\n")
    hook.chmod(0o755)
    failures: list[str] = []

    def writer(mine: list[Submission]) -> None:
        for submission in mine:
            verdict = submit(home, submission, now=NOW, fetcher=OfflineFetcher())
            if verdict.outcome != "accepted":
                failures.append(verdict.line())

    threads = [threading.Thread(target=writer, args=(work[n::writers],)) for n in range(writers)]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    if failures:
        raise SystemExit(f"not accepted: {failures[0]}")
    return len(work) / elapsed, len(pushes.read_text().splitlines()) / len(work)


def s3_puts(endpoint: str, rounds: int) -> list[float]:
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    body = os.urandom(64 * 1024)  # a typical bundle is tens of kB
    times = []
    for number in range(rounds):
        began = time.perf_counter()
        client.put_object(Bucket="bench", Key=f"probe/{number}.tar", Body=body, IfNoneMatch="*")
        times.append(time.perf_counter() - began)
    return times


def ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 2)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sources", type=int, default=50)
    parser.add_argument("--findings", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--writers", type=int, default=4, help="threads submitting at once to one hosted project")
    args = parser.parse_args()
    per_source = max(1, args.findings // args.sources)
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
    with tempfile.TemporaryDirectory(prefix="rw-bench-backends-") as scratch_dir:
        scratch = Path(scratch_dir)
        served = scratch / "served"
        for name in ("a", "b", "c"):
            subprocess.run(["git", "init", "-q", "--bare", "--initial-branch=main", str(served / f"{name}.git")],
                           check=True)
        with git_daemon(served) as prefix, s3_server() as endpoint:
            boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(Bucket="bench")
            embedded = landings(scratch / "embedded", Backends(), None, args.rounds, args.sources, per_source)
            hosted = landings(scratch / "hosted", Backends(), f"{prefix}/a.git", args.rounds, args.sources,
                              per_source)
            s3_traces = Backends(traces=TracesBackend(kind="s3", bucket="bench", endpoint_url=endpoint,
                                                      region="us-east-1"))
            remote = landings(scratch / "remote", s3_traces, f"{prefix}/b.git", args.rounds, args.sources, per_source)
            puts = s3_puts(endpoint, args.rounds * 2)
            group_per_s, pushes_per_landing = group_landings(
                scratch / "group", f"{prefix}/c.git", served / "c.git", args.writers, max(1, args.rounds // 2),
                args.sources, per_source)
    result = {"embedded_p50_ms": ms(embedded), "git_host_p50_ms": ms(hosted), "git_host_s3_p50_ms": ms(remote),
              "s3_put_p50_ms": ms(puts)}
    for name in ("embedded", "git_host", "git_host_s3"):
        result[f"{name}_landings_per_s"] = round(1000 / result[f"{name}_p50_ms"], 1)
    result.update({"writers": args.writers, "group_landings_per_s": round(group_per_s, 1),
                   "pushes_per_landing": round(pushes_per_landing, 2)})
    print(f"one project, {args.rounds} accepted extract submissions each (fsync off):")
    for name in ("embedded", "git_host", "git_host_s3"):
        print(f"  {name:12} p50 {result[f'{name}_p50_ms']} ms  ({result[f'{name}_landings_per_s']} landings/s)")
    print(f"  S3 put of a 64 kB bundle: p50 {result['s3_put_p50_ms']} ms")
    print(f"  git host, {args.writers} writers at once: {result['group_landings_per_s']} landings/s, "
          f"{result['pushes_per_landing']} pushes per landing")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
