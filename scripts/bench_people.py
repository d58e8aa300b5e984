"""A steward approves 100 held objects over HTTP, one by one, beside the same approvals run
in-process (issue 22): what steering a project from another machine costs.

Set-up: one home with the demo project, its people (tests/support/authority.py) and 2 x N held
sources planted in the queue. `rw serve` runs on it (loopback, one worker). The run alternates
`--rounds` times between an HTTP round (the steward's `POST /projects/{slug}/holds/{id}/approve`,
one request after the other on one kept-alive connection, as `rw hold approve --server` sends
them) and an in-process round (the same `verifier.service.people.decide_hold` the endpoint runs),
each taking its share of the held objects, so both see a queue and a history of the same size.
Wall time is summed per side; the machine is shared, so figures are noisy (report them as
measured under load).

Checks afterwards: every approval landed (one `hold` ledger row each, the queue empty of what was
approved) and the ledger verifies. Last line: one JSON object with `http_s`, `local_s`, `ratio`
(http over local), `approved` (over HTTP), `approved_local`, `ledger_ok`. Target: `approved` 100,
`ratio` <= 1.5.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.authority import STEWARD, plant_held_sources, with_people  # noqa: E402
from tests.support.world import SLUG, make_world  # noqa: E402
from verifier.audits.audit import verify_ledger  # noqa: E402
from verifier.client.http import Client  # noqa: E402
from verifier.service.people import decide_hold  # noqa: E402
from verifier.store.home import Settings  # noqa: E402
from verifier.wiring import open_home  # noqa: E402

RW = str(Path(sys.executable).parent / "rw")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def serving(home: Path, log: Path) -> Iterator[int]:
    """`rw serve` on loopback for the block; yields its port. Stops only the process it started."""
    port = free_port()
    with log.open("wb") as out:
        proc = subprocess.Popen([RW, "serve", "--port", str(port), "--workers", "1"],
                                env={**os.environ, "RW_HOME": str(home)}, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        client = Client(f"http://127.0.0.1:{port}", retry_for_s=60.0)
        if client.get("/health", auth=False).status != 200:
            raise SystemExit(f"rw serve did not start; see {log}")
        yield port
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", type=int, default=100, help="held objects approved on each side")
    parser.add_argument("--rounds", type=int, default=4, help="HTTP and in-process rounds, alternating")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rw-bench-people-") as scratch:
        root = Path(scratch)
        world = make_world(root)
        world.home.save_settings(Settings.model_validate({**world.home.settings.model_dump(), "durable": True}))
        people = with_people(world)
        held = plant_held_sources(world.home, SLUG, 2 * args.objects)
        remote_ids, local_ids = held[0::2], held[1::2]  # interleaved: both sides see the same queue sizes
        token = people.token(STEWARD)
        steward = people.actor(STEWARD)
        http_s = local_s = 0.0
        approved = approved_local = 0
        with serving(world.home.root, root / "serve.log") as port:
            client = Client(f"http://127.0.0.1:{port}", token, keep_alive=True, retry_for_s=60.0)
            home = open_home(world.home.root)
            share = -(-args.objects // args.rounds)
            for start in range(0, args.objects, share):
                started = time.perf_counter()
                for object_id in remote_ids[start:start + share]:
                    reply = client.post_json(f"/projects/{SLUG}/holds/{object_id}/approve",
                                             {"reason": "Read it: a fair source."})
                    if reply.status != 200:
                        raise SystemExit(f"HTTP {reply.status}: {reply.body}")
                    approved += 1
                http_s += time.perf_counter() - started
                started = time.perf_counter()
                for object_id in local_ids[start:start + share]:
                    decide_hold(home, steward, SLUG, object_id, approve_it=True, reason="Read it: a fair source.",
                                now=datetime.now(UTC).replace(microsecond=0))
                    approved_local += 1
                local_s += time.perf_counter() - started
            client.close()
        home = open_home(world.home.root)
        repo = home.project(SLUG)
        rows = [row for row in verify_ledger(repo, home.read_anchor(SLUG)).rows if row.action == "hold"]
        ledger_ok = verify_ledger(repo, home.read_anchor(SLUG)).ok and len(rows) == approved + approved_local
        result = {"objects": args.objects, "rounds": args.rounds, "http_s": round(http_s, 3),
                  "local_s": round(local_s, 3), "ratio": round(http_s / local_s, 3) if local_s else None,
                  "approved": approved, "approved_local": approved_local, "ledger_ok": ledger_ok,
                  "http_ms_each": round(1000 * http_s / max(approved, 1), 1),
                  "local_ms_each": round(1000 * local_s / max(approved_local, 1), 1)}
        print(f"HTTP: {approved} approvals in {http_s:.2f} s; in-process: {approved_local} in {local_s:.2f} s")
        print(json.dumps(result, sort_keys=True))
        return 0 if ledger_ok and approved == args.objects else 1


if __name__ == "__main__":
    sys.exit(main())
