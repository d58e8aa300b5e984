"""Benchmark: failover of a project between two verifier instances sharing a PostgreSQL Commons
(a throwaway cluster) and a git host (a bare repository over file://). Instance a lands and stops
(as if killed); instance b retries a landing every 0.1 s until it takes the project over.

Last line: one JSON object with `failover_s` (from a's stop to b's first landing, on the host),
`lease_s`, and `takeover_landing_ms` (b's first landing: the lease, fetching the host, the landing).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench_submit import NOW, SLUG, build_corpus

from tests.support.devservers import postgres_cluster
from verifier.deploy.hosting import attach_remote
from verifier.errors import RetryableError
from verifier.formats.leaf import LeafContract, LeafInputs
from verifier.state.layout import default_write_rules
from verifier.store.backends import Backends, CommonsBackend
from verifier.store.home import Home, Settings
from verifier.wiring import open_home
from verifier.writes.project import add_leaf

DSN_ENV = "RW_BENCH_COMMONS_DSN"


def leaf(home: Home, leaf_id: str, source_id: str, base: str) -> None:
    add_leaf(home, SLUG, LeafContract(
        leaf_id=leaf_id, kind="extract", inputs=LeafInputs(source_id=source_id), base_revision=base,
        may_write=default_write_rules("extract"), check="extract", created_at=NOW, created_by="planner",
        expires_at=NOW + timedelta(days=1)), now=NOW, actor="planner",
        disjoint=False)  # a load generator: many leaves on one source at once


def instance(root: Path, name: str, lease_s: float, remotes: dict[str, str]) -> Home:
    backends = Backends(commons=CommonsBackend(kind="postgres", dsn_env=DSN_ENV), remotes=remotes,
                        instance=name, instance_address=f"http://{name}.internal", lease_s=lease_s)
    home = open_home(root)
    home.save_settings(Settings(durable=False, fetch="offline", backends=backends))
    return open_home(root)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--lease-s", type=float, default=8.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rw-bench-failover-") as scratch_dir, postgres_cluster() as dsn:
        os.environ[DSN_ENV] = dsn
        scratch = Path(scratch_dir)
        bare = scratch / "host.git"
        subprocess.run(["git", "init", "-q", "--bare", "--initial-branch=main", str(bare)], check=True)
        url = f"file://{bare}"
        plain = open_home(scratch / "a")
        plain.save_settings(Settings(durable=False, fetch="offline"))
        catalogue = build_corpus(open_home(scratch / "a"), 5, 2, 4)
        attach_remote(open_home(scratch / "a"), SLUG, url)
        a = instance(scratch / "a", "a", args.lease_s, {SLUG: url})
        (scratch / "b").mkdir()
        if (scratch / "a" / "identities.json").exists():  # identity is shared in a deployment
            shutil.copy(scratch / "a" / "identities.json", scratch / "b" / "identities.json")
        b = instance(scratch / "b", "b", args.lease_s, {SLUG: url})
        tip = a.project(SLUG).tip()
        assert tip is not None
        leaf(a, "extract-a", catalogue[0][0], tip)  # a holds the lease
        stopped = time.perf_counter()  # a is killed here
        base = a.project(SLUG).tip()
        assert base is not None
        attempts = 0
        while True:
            attempts += 1
            began = time.perf_counter()
            try:
                leaf(b, "extract-b", catalogue[1][0], base)
                break
            except RetryableError:
                time.sleep(0.1)
        landed = time.perf_counter()
        host = subprocess.run(["git", "--git-dir", str(bare), "rev-parse", "refs/heads/main"], check=True,
                              capture_output=True, text=True).stdout.strip()
        assert host == b.project(SLUG).tip()
    result = {"failover_s": round(landed - stopped, 2), "lease_s": args.lease_s,
              "takeover_landing_ms": round((landed - began) * 1000, 1), "attempts": attempts}
    print(f"failover: {result['failover_s']} s with a {args.lease_s} s lease ({attempts} attempts by b); "
          f"b's take-over landing {result['takeover_landing_ms']} ms")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
