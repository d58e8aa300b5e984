"""Load test: N agents submit concurrently to 4 projects through `rw serve` for a bounded time, then
every submission is checked against the ledger; the same work, run in-process in alternating
rounds, gives the rate to compare with.

Set-up (not timed): a home with P projects, each with a few included sources of numbered
sentences, N registered agents (two per operator), and one extract leaf per planned submission.
Every submission creates three findings no other submission creates, so all of them can land in
any order (the branch moves under each one; it lands on the tip, never stale). Every
`--reject-every`-th submission misquotes its source on purpose and must be rejected with
`excerpt_not_found`: a documented rejection, not an error.

Measurement: the home is copied twice. `rw serve` runs on one copy (loopback, --workers), and the
run alternates `--rounds` times between a server round (N threads, one per agent, submit their
share, one connection per submission as `rw submit --server` makes, until the round's share of
`--seconds` passes) and an in-process round, which runs the submissions that server round finished
on the other copy, one after another in this process through `verifier.pipeline.submit.submit`
(what in-process `rw submit` calls), bounded by the same time. Alternating keeps whatever else
the machine is doing from favouring one side.

Checks afterwards, per project of the server's copy: every submission sent has exactly one ledger
row (`lost` counts none, `duplicated` more than one), accepted rows are exactly the contribution
commits on the branch, `rw ledger --verify` passes, and no response was anything but a verdict of
accepted or the expected documented rejection (`errors`).

Last line: one JSON object with submissions, lost, duplicated, errors, server_per_s,
inprocess_per_s, ratio, p50_ms, p95_ms. Targets: lost = duplicated = errors = 0, ratio >= 0.7.

`--backends remote` (scripts/load_remote.py) runs the same load across two instances on
PostgreSQL, an S3-compatible server and a git host, kills -9 a lease holder mid-run, and compares
with the embedded single instance measured in the same invocation, once before the remote run and
once after it (the rate of the two together, so the shared machine's drift weighs on both sides):
last line one JSON object with lost, duplicated, ratio and failover_s (targets 0, 0, >= 0.85,
<= 10), and where the time went: CPU per submission and cores used on each side (every process
the run started, servers and git included: on a machine busy with other work both sides get
about the same cores, so the ratio follows CPU per submission), the remote CPU by part
(`remote_cpu_ms_by_part`: the instances' own processes, the git they ran, PostgreSQL, the S3
server, the git host; the killed instance's up to its kill, since its workers, reaped by init once
it died, take their CPU with them), the remote rate before the kill
and after the failover, and the load average. Figures measured, and under what load: docs/deploy.md
("Two instances, measured" and "Where the remote CPU goes, by part"); the last: ratio 0.50-0.53
in three runs of 15 s on a quiet machine (0.24-0.67 at load average 8-11 from other sessions),
lost 0 and duplicated 0 in each.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from verifier.agentkit.bundle import TraceRecorder
from verifier.agentkit.objects import finding_file, source_files
from verifier.agentkit.workspace import creation_patch
from verifier.audits.audit import verify_ledger
from verifier.client.http import Client
from verifier.formats.entries import SubmitEntry
from verifier.formats.ids import trace_id_for
from verifier.formats.leaf import LeafContract, LeafInputs
from verifier.formats.trace import bundle_digest
from verifier.pipeline.ledger import read_chain
from verifier.pipeline.submit import Submission, submit
from verifier.pipeline.writer import ProjectWriter
from verifier.state.layout import default_write_rules
from verifier.store.fetcher import OfflineFetcher
from verifier.store.gitrepo import VERIFIER_EMAIL
from verifier.store.home import Home, Settings
from verifier.text.extract import extract_text
from verifier.wiring import open_home
from verifier.writes.project import add_leaf, init_project

sys.path.insert(0, str(Path(__file__).resolve().parent))
import load_remote  # from this script's folder, put on the path just above

RW = str(Path(sys.executable).parent / "rw")
VENDORS = ["Tessellate", "Quillmark", "Kestrel", "Northgate", "Aurora", "Basalt", "Cobalt", "Drift"]
SOURCES_PER_PROJECT = 4
FINDINGS_PER_SUBMISSION = 3


def sentence(project: int, source: int, index: int) -> str:
    vendor = VENDORS[(source + index) % len(VENDORS)]
    return (f"In project {project} quarter {index % 4 + 1}, {vendor} reported {source * 37 + index * 11} paying "
            f"teams for layer product {source}-{index}, up {index % 9 + 1}.{source % 10}% on the quarter before.")


@dataclass
class Work:
    """One planned submission."""

    slug: str
    leaf_id: str
    agent: str
    token: str
    bundle: dict[str, bytes]
    patch: bytes
    expect: str  # "accepted" or the rejection code it must get
    trace_id: str = ""

    def __post_init__(self) -> None:
        self.trace_id = trace_id_for(bundle_digest(self.bundle))


@dataclass
class Result:
    work: Work
    status: int | None
    outcome: str | None
    code: str | None
    ms: float
    error: str | None = None
    commit: str = ""  # remote: the acknowledged verdict's commit
    instance: str = ""  # remote: the instance that answered
    at: float = 0.0  # remote: when it answered (monotonic)


@dataclass
class Plan:
    home: Path
    work: list[Work] = field(default_factory=list)


def build(root: Path, *, projects: int, agents: int, per_project: int, reject_every: int, durable: bool) -> Plan:
    home = open_home(root)
    home.save_settings(Settings(durable=False, fetch="offline"))  # set-up needs no fsync; the runs may
    home = open_home(root)
    now = datetime.now(UTC).replace(microsecond=0)
    tokens = [(f"load-agent-{n:02d}", f"load-op-{n // 2:02d}") for n in range(agents)]
    registered = [(handle, op, home.identities.add(handle, op, "agent", now)) for handle, op in tokens]
    plan = Plan(root)
    sentences_per_source = (per_project // SOURCES_PER_PROJECT + 1) * FINDINGS_PER_SUBMISSION
    for p in range(projects):
        slug = f"load-{p}"
        template = Path(tempfile.mkdtemp(prefix="rw-load-template-"))
        (template / "PROJECT.md").write_text(f"---\nproject: {slug}\n---\nLoad test project {p}.\n")
        init_project(home, slug, now=now, template=template)
        shutil.rmtree(template)
        repo = home.project(slug)
        files: dict[str, bytes] = {}
        catalogue = []
        for s in range(SOURCES_PER_PROJECT):
            text = " ".join(sentence(p, s, k) for k in range(sentences_per_source)) + "\n"
            made = source_files(url=f"https://load.example.org/{slug}/source/{s}", data=text.encode(),
                                media_type="text/plain", fetched_by="load", retrieved_at=now, language="en",
                                rights="public", published=None, title=None, leaf_id=None, status="included")
            files.update(made)
            source_id = next(path for path in made if path.endswith(".yaml")).rsplit("/", 1)[1][:-5]
            catalogue.append((s, source_id, extract_text(text.encode(), "text/plain")))
        with ProjectWriter.open(home, slug) as writer:
            writer.land(SubmitEntry(at=now, action="human", actor="load", actor_type="verifier",
                                    description=f"load test sources: {SOURCES_PER_PROJECT}"), bookkeeping=files)
        for n in range(per_project):
            s, source_id, text = catalogue[n % SOURCES_PER_PROJECT]
            leaf_id = f"extract-{n:05d}"
            tip = repo.tip()
            add_leaf(home, slug, LeafContract(
                leaf_id=leaf_id, kind="extract", inputs=LeafInputs(source_id=source_id),
                base_revision=tip or "", may_write=default_write_rules("extract"), check="extract", created_at=now,
                created_by="planner", expires_at=now + timedelta(days=1)), now=now, actor="planner",
                disjoint=False)  # a load generator: many leaves on one source at once
            handle, operator, token = registered[(n * projects + p) % agents]
            bad = reject_every > 0 and (n * projects + p) % reject_every == reject_every - 1
            first = (n // SOURCES_PER_PROJECT) * FINDINGS_PER_SUBMISSION
            findings: dict[str, bytes] = {}
            for k in range(first, first + FINDINGS_PER_SUBMISSION):
                excerpt = sentence(p, s, k)
                location = None
                if bad:
                    excerpt = excerpt.replace("paying teams", "paying customers")  # not what the source says
                    location = (0, len(excerpt))
                findings.update([finding_file(source_id=source_id, source_text=text, excerpt=excerpt,
                                              statement=f"Claim {k}.", limitation="Synthetic load-test finding.",
                                              leaf_id=leaf_id, location=location)])
            patch = creation_patch(findings)
            trace = TraceRecorder()
            trace.add(now - timedelta(seconds=3), "tool_call", {"tool": "rw source text", "args": [slug, source_id]})
            trace.add(now - timedelta(seconds=2), "tool_result", text[:500])
            trace.add(now - timedelta(seconds=1), "final", f"{FINDINGS_PER_SUBMISSION} findings.")
            assert tip is not None
            bundle = trace.bundle(leaf_id=leaf_id, agent=handle, operator=operator, base_revision=tip, patch=patch,
                                  level="L1")
            plan.work.append(Work(slug, leaf_id, handle, token, bundle, patch,
                                  "excerpt_not_found" if bad else "accepted"))
    home.save_settings(Settings(durable=durable, fetch="offline"))
    home.upkeep.wait_idle()  # the projects packed (verifier.store.upkeep) before the home is copied
    return plan


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_ready(port: int, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"rw serve exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
                sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                if sock.recv(16).startswith(b"HTTP/1.1 200"):
                    return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("rw serve did not start")


def classify(work: Work, status: int | None, body: dict[str, object]) -> Result:
    verdict = body.get("verdict") if isinstance(body.get("verdict"), dict) else None
    outcome = str(verdict["outcome"]) if isinstance(verdict, dict) else None
    rejections = verdict.get("rejections") if isinstance(verdict, dict) else None
    code = str(rejections[0]["code"]) if isinstance(rejections, list) and rejections else None
    error = body.get("error")
    if verdict is None and isinstance(error, dict):  # not a verdict: the error's code, for the report
        code = f"{error.get('code')}: {str(error.get('message'))[:200]}"
    return Result(work, status, outcome, code, 0.0)


def group_cpu_s(pgid: int) -> float:
    """CPU seconds used so far by every live process of a process group (Linux /proc)."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # fields after the name: state, ppid, pgrp, ..., utime (11), stime (12)
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def tree_cpu_s(daemon: str | None = None) -> float:
    """CPU seconds of everything this process started (Linux /proc): every live descendant's own
    and its reaped children's, and this process's reaped children's (a killed instance); with
    `daemon`, also of the processes under the one whose command line holds it (PostgreSQL, which
    pg_ctl detaches). Taken before and after a round, the difference is the round's CPU, servers
    and git included, the load generator's own excluded."""
    table = _processes()
    parents = {pid: row[0] for pid, row in table.items()}
    spent = {pid: row[2] + row[3] for pid, row in table.items()}  # own and reaped children's CPU
    roots = {os.getpid()} | {pid for pid, row in table.items() if daemon is not None and daemon in row[4]}
    me = os.getpid()
    total = spent.get(me, 0) - sum(int(value) for value in
                                   Path(f"/proc/{me}/stat").read_text().rsplit(")", 1)[1].split()[11:13])
    for pid, ticks in spent.items():
        ancestor: int | None = pid if pid in roots and pid != me else parents.get(pid)
        while ancestor is not None and ancestor not in roots and ancestor not in (0, 1):
            ancestor = parents.get(ancestor)
        if ancestor in roots and pid != me:
            total += ticks
    return total / os.sysconf("SC_CLK_TCK")


def _processes() -> dict[int, tuple[int, int, int, int, str]]:
    """Every live process (Linux /proc): pid -> (ppid, process group, own CPU ticks, reaped
    children's CPU ticks, command line)."""
    table: dict[int, tuple[int, int, int, int, str]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            command = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        # fields after the name: state, ppid, pgrp, ..., utime (11), stime (12), cutime (13), cstime (14)
        table[int(stat.parent.name)] = (int(fields[1]), int(fields[2]), int(fields[11]) + int(fields[12]),
                                        int(fields[13]) + int(fields[14]), command)
    return table


def instance_cpu_s(pgid: int) -> tuple[float, float]:
    """CPU seconds so far of one `rw serve` instance (its process group: the main process and its
    workers): (its own processes, the git they ran, live or reaped). Taken just before a kill -9,
    it is what the killed instance spent: once dead, its workers are reaped by init, not by us."""
    own = ran = 0
    for _, group, mine, reaped, command in _processes().values():
        if group == pgid:
            if command.startswith("git"):
                ran += mine
            else:
                own += mine
            ran += reaped  # what a process of the instance ran and waited for: git
    tick = os.sysconf("SC_CLK_TCK")
    return own / tick, ran / tick


SERVERS = ("postgres", "s3", "git_host")


def servers_cpu_s(daemon: str) -> dict[str, float]:
    """CPU seconds so far of the stand-ins of the remote run (Linux /proc), live processes and what
    they reaped: PostgreSQL (the processes under the one whose command line holds `daemon`), the S3
    server (moto) and the git host (`git daemon` and the receive-packs it forked)."""
    table = _processes()
    me = os.getpid()
    spent = dict.fromkeys(SERVERS, 0)

    def part_of(pid: int) -> str | None:
        while pid in table and pid not in (0, 1):
            ppid, _, _, _, command = table[pid]
            if daemon in command:
                return "postgres"
            if ppid == me:
                return "s3" if "moto.server" in command else "git_host" if "git daemon" in command else None
            pid = ppid
        return None

    for pid, (_, _, mine, reaped, _) in table.items():
        part = part_of(pid)
        if part is not None:
            spent[part] += mine + reaped
    return {part: ticks / os.sysconf("SC_CLK_TCK") for part, ticks in spent.items()}


@contextlib.contextmanager
def serving(home: Path, *, workers: int, log: Path) -> Iterator[tuple[int, int]]:
    """`rw serve` on loopback for the duration of the block; yields (port, process group)."""
    port = free_port()
    env = {**os.environ, "RW_HOME": str(home)}
    with log.open("wb") as out:
        proc = subprocess.Popen([RW, "serve", "--port", str(port), "--workers", str(workers)], env=env,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_ready(port, proc)
        yield port, proc.pid
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


def server_round(port: int, queues: dict[str, list[Work]], seconds: float) -> tuple[list[Result], float]:
    """Every agent submits from its queue (consuming it) until `seconds` pass; one connection per
    submission, as a real agent's `rw submit --server` makes."""
    results: list[Result] = []
    lock = threading.Lock()
    start_gate = threading.Event()
    deadline = [0.0]

    def agent(items: list[Work]) -> None:
        client = Client(f"http://127.0.0.1:{port}", items[0].token, retry_for_s=10.0, timeout_s=60.0)
        start_gate.wait()
        while items and time.monotonic() < deadline[0]:
            item = items.pop(0)
            started = time.perf_counter()
            try:
                reply = client.submit(item.slug, item.leaf_id, item.bundle, item.patch)
                result = classify(item, reply.status, reply.body)
            except Exception as exc:  # counted as an error, never hidden
                result = Result(item, None, None, None, 0.0, f"{type(exc).__name__}: {exc}")
            result.ms = (time.perf_counter() - started) * 1000
            with lock:
                results.append(result)

    threads = [threading.Thread(target=agent, args=(items,)) for items in queues.values() if items]
    return results, run_together(threads, start_gate, deadline, seconds, join_s=seconds + 120)


def run_together(threads: list[threading.Thread], start_gate: threading.Event, deadline: list[float],
                 seconds: float, *, join_s: float) -> float:
    """Start the threads, open the gate they wait at with `seconds` to run, wait for them; the
    seconds that took."""
    for thread in threads:
        thread.start()
    began = time.perf_counter()
    deadline[0] = time.monotonic() + seconds
    start_gate.set()
    for thread in threads:
        thread.join(timeout=join_s)
    return time.perf_counter() - began


def check(home: Path, results: list[Result]) -> dict[str, int]:
    """Every sent submission against the ledger and the branch."""
    h = open_home(home)
    counts: dict[tuple[str, str, str, str | None], int] = {}
    problems = 0
    accepted_rows = 0
    for slug in h.projects():
        repo = h.project(slug)
        tip = repo.tip()
        report = verify_ledger(repo, h.read_anchor(slug))
        if not report.ok:
            print(f"{slug}: ledger --verify: {report.problems[:3]}", file=sys.stderr)
            problems += 1
        rows = [row for _, row in read_chain(repo.view(tip)) if row.action == "submit"]
        for row in rows:
            key = (slug, row.actor, row.leaf_id or "", row.trace_id)
            counts[key] = counts.get(key, 0) + 1
        accepted = {row.commit for row in rows if row.outcome in ("accepted", "held")}
        accepted_rows += len(accepted)
        contributions = set()
        commit = repo.commit(tip) if tip else None
        while commit is not None:
            if commit.author.email != VERIFIER_EMAIL:
                contributions.add(str(commit.id))
            commit = commit.parents[0] if commit.parents else None
        if accepted != contributions:
            print(f"{slug}: {len(accepted)} accepted rows but {len(contributions)} contribution commits",
                  file=sys.stderr)
            problems += 1
    lost = duplicated = 0
    for result in results:
        work = result.work
        n = counts.get((work.slug, work.agent, work.leaf_id, work.trace_id), 0)
        lost += n == 0
        duplicated += n > 1
    errors = sum(1 for r in results if r.error or r.status != 201 or
                 (r.outcome if r.work.expect == "accepted" else r.code) != r.work.expect)
    for r in [r for r in results if r.error or r.status != 201][:5]:
        print(f"error: {r.work.slug}/{r.work.leaf_id}: {r.status} {r.error or ''}", file=sys.stderr)
    return {"lost": lost, "duplicated": duplicated, "errors": errors, "problems": problems,
            "accepted": accepted_rows}


def inprocess_round(home: Home, work: list[Work], seconds: float) -> tuple[int, float]:
    """The same submissions, one after another in this process, as in-process `rw submit` runs them."""
    fetcher = OfflineFetcher()
    began = time.perf_counter()
    done = 0
    for item in work:
        if time.perf_counter() - began >= seconds:
            break
        submit(home, Submission(item.slug, item.leaf_id, item.patch, item.bundle, item.token),
               now=datetime.now(UTC).replace(microsecond=0), fetcher=fetcher)
        done += 1
    return done, time.perf_counter() - began


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))] if ordered else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--backends", choices=("embedded", "remote"), default="embedded",
                        help="remote: two instances on PostgreSQL, S3 (moto) and git daemon, one killed mid-run")
    parser.add_argument("--lease-s", type=float, default=2.0, help="remote: the project lease (the failover time)")
    parser.add_argument("--kill-at", type=float, default=0.4, help="remote: kill the holder at this share of the run")
    parser.add_argument("--agents", type=int, default=16)
    parser.add_argument("--projects", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=15.0, help="how long the agents submit")
    parser.add_argument("--per-project", type=int, default=300, help="leaves (planned submissions) per project")
    parser.add_argument("--workers", type=int, default=2, help="rw serve worker processes")
    parser.add_argument("--rounds", type=int, default=3, help="server and in-process rounds, alternating")
    parser.add_argument("--reject-every", type=int, default=10, help="every n-th submission misquotes (0: none)")
    parser.add_argument("--no-fsync", action="store_true", help="durable=false on both sides (default: fsync)")
    parser.add_argument("--keep", type=Path, help="keep the homes and the server log here")
    args = parser.parse_args()
    if args.backends == "remote":
        return main_remote(args)
    scratch = Path(tempfile.mkdtemp(prefix="rw-load-"))
    try:
        began = time.perf_counter()
        plan = build(scratch / "template", projects=args.projects, agents=args.agents, per_project=args.per_project,
                     reject_every=args.reject_every, durable=not args.no_fsync)
        print(f"set-up: {args.projects} projects, {args.agents} agents, {len(plan.work)} planned submissions "
              f"in {time.perf_counter() - began:.1f}s", file=sys.stderr)
        shutil.copytree(scratch / "template", scratch / "server")
        shutil.copytree(scratch / "template", scratch / "inprocess")
        queues: dict[str, list[Work]] = {}
        for item in plan.work:
            queues.setdefault(item.agent, []).append(item)
        inprocess_home = open_home(scratch / "inprocess")
        results: list[Result] = []
        elapsed = inproc_elapsed = 0.0
        done = 0
        # Rounds alternate between the two sides, so whatever else the machine is doing weighs on
        # both alike; each in-process round runs what the server round before it finished.
        server_cpu = client_cpu = inproc_cpu = 0.0
        with serving(scratch / "server", workers=args.workers, log=scratch / "serve.log") as (port, group):
            for _ in range(args.rounds):
                cpu, mine = group_cpu_s(group), time.process_time()
                got, took = server_round(port, queues, args.seconds / args.rounds)
                server_cpu += group_cpu_s(group) - cpu
                client_cpu += time.process_time() - mine
                results += got
                elapsed += took
                mine = time.process_time()
                n, took = inprocess_round(inprocess_home, [r.work for r in got], took)
                inproc_cpu += time.process_time() - mine
                done += n
                inproc_elapsed += took
        checked = check(scratch / "server", results)
        latencies = [r.ms for r in results if r.error is None]
        server_rate = len(results) / elapsed if elapsed else 0.0
        inproc_rate = done / inproc_elapsed if inproc_elapsed else 0.0
        summary = {
            "submissions": len(results), "lost": checked["lost"], "duplicated": checked["duplicated"],
            "errors": checked["errors"] + checked["problems"], "accepted": checked["accepted"],
            "server_per_s": round(server_rate, 2), "inprocess_per_s": round(inproc_rate, 2),
            "ratio": round(server_rate / inproc_rate, 3) if inproc_rate else None,
            "p50_ms": round(statistics.median(latencies), 1) if latencies else None,
            "p95_ms": round(percentile(latencies, 0.95), 1) if latencies else None,
            "agents": args.agents, "projects": args.projects, "workers": args.workers, "seconds": args.seconds,
            "fsync": not args.no_fsync,
        }
        print(f"server: {len(results)} submissions in {elapsed:.1f}s ({server_rate:.1f}/s), "
              f"p50 {summary['p50_ms']} ms, p95 {summary['p95_ms']} ms", file=sys.stderr)
        print(f"in-process: {done} of the same submissions in {inproc_elapsed:.1f}s ({inproc_rate:.1f}/s)",
              file=sys.stderr)
        per = 1000 / max(1, len(results))
        print(f"cpu per submission: server {per * server_cpu:.1f} ms (+ load generator {per * client_cpu:.1f} ms), "
              f"in-process {1000 * inproc_cpu / max(1, done):.1f} ms", file=sys.stderr)
        print(f"lost {summary['lost']}, duplicated {summary['duplicated']}, errors {summary['errors']}, "
              f"ratio {summary['ratio']}", file=sys.stderr)
        if args.keep:
            shutil.copytree(scratch, args.keep, dirs_exist_ok=True)
        print(json.dumps(summary))
        return 0 if summary["lost"] == summary["duplicated"] == summary["errors"] == 0 else 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def agent_queues(plan: Plan) -> dict[str, list[Work]]:
    queues: dict[str, list[Work]] = {}
    for item in plan.work:
        queues.setdefault(item.agent, []).append(item)
    return queues


def remote_round(running: list[load_remote.Instance], queues: dict[str, list[Work]], seconds: float,
                 failover: load_remote.Failover, kill_after: float) -> tuple[list[Result], float]:
    """Every agent submits from its queue until `seconds` pass, project p first to instance p % 2
    (which forwards it to the instance writing the project), each submission with one
    Idempotency-Key on both instances; `kill_after` seconds in, the holder of project 0 is killed -9."""
    results: list[Result] = []
    lock = threading.Lock()
    start_gate = threading.Event()
    deadline = [0.0]

    def agent(items: list[Work]) -> None:
        start_gate.wait()
        while items and time.monotonic() < deadline[0]:
            item = items.pop(0)
            first = int(item.slug.rsplit("-", 1)[1]) % len(running)
            order = running[first:] + running[:first]
            started = time.perf_counter()
            try:
                where, status, body = load_remote.submit_anywhere(
                    order, item.token, item.slug, item.leaf_id, item.bundle, item.patch, key=f"load-{item.trace_id}")
                result = classify(item, status, body)
                if result.outcome in ("accepted", "held"):
                    failover.landed(where.name, item.slug)
                verdict = body.get("verdict")
                result.commit = str(verdict.get("commit") or "") if isinstance(verdict, dict) else ""
                result.instance, result.at = where.name, time.monotonic()
            except Exception as exc:  # counted as an error, never hidden
                result = Result(item, None, None, None, 0.0, f"{type(exc).__name__}: {exc}")
            result.ms = (time.perf_counter() - started) * 1000
            with lock:
                results.append(result)

    def killer() -> None:
        start_gate.wait()
        failover.started_at = time.monotonic()
        time.sleep(kill_after)
        victim, slugs = load_remote.holder_of("load-0", running)  # project 0's writer, and its other projects
        failover.victim = victim.name
        failover.victim_slugs = frozenset(slugs)
        with failover.lock:
            failover.killed_at = time.monotonic()
        failover.victim_cpu = instance_cpu_s(victim.proc.pid)  # its workers' CPU is lost with them
        load_remote.kill(victim)

    threads = [threading.Thread(target=agent, args=(items,)) for items in queues.values() if items]
    threads.append(threading.Thread(target=killer))
    return results, run_together(threads, start_gate, deadline, seconds, join_s=seconds + load_remote.GIVE_UP_S + 60)


def check_remote(hosts: Path, results: list[Result]) -> dict[str, int]:
    """Every acknowledged acceptance on the git host exactly once; nothing landed twice."""
    lost = duplicated = problems = crashes = 0
    for slug in sorted({r.work.slug for r in results}):
        accepted, commits, contributions, crashed = load_remote.host_counts(hosts, slug)
        crashes += crashed
        if commits != contributions:
            print(f"{slug}: {len(commits)} accepted rows but {len(contributions)} contribution commits on the host",
                  file=sys.stderr)
            problems += 1
        for result in (r for r in results if r.work.slug == slug):
            n = accepted.get(result.work.trace_id, 0)
            duplicated += n > 1
            if result.outcome in ("accepted", "held"):
                lost += n != 1 or result.commit not in contributions
    errors = [r for r in results if r.error or r.status not in (200, 201) or
              (r.outcome if r.work.expect == "accepted" else r.code) != r.work.expect]
    for r in errors[:5]:
        print(f"error: {r.work.slug}/{r.work.leaf_id}: {r.status} {r.outcome} {r.code} {r.error or ''}",
              file=sys.stderr)
    return {"lost": lost, "duplicated": duplicated, "errors": len(errors), "problems": problems,
            "crash_rows": crashes, "replays": sum(1 for r in results if r.status == 200)}


def phase_rates(results: list[Result], failover: load_remote.Failover) -> dict[str, float | None]:
    """Answers per second before the kill (two instances), and from the survivor's first landing of
    a killed instance's project to the last answer (one instance): where the remote run's time went."""
    start, killed, back = failover.started_at, failover.killed_at, failover.first_landing_at
    ends = [r.at for r in results if r.at]
    if start is None or killed is None or back is None or not ends:
        return {"before_kill_per_s": None, "after_failover_per_s": None}
    before = sum(1 for r in results if r.at and r.at < killed)
    after = sum(1 for r in results if r.at and r.at >= back)
    return {"before_kill_per_s": round(before / (killed - start), 2) if killed > start else None,
            "after_failover_per_s": round(after / (max(ends) - back), 2) if max(ends) > back else None}


def report_takeover(results: list[Result], failover: load_remote.Failover) -> None:
    """Who answered for the killed instance's projects, before and after the kill (stderr)."""
    killed_at = failover.killed_at or 0.0
    seen = Counter((r.instance, "before" if r.at < killed_at else "after") for r in results
                   if r.work.slug in failover.victim_slugs and r.instance)
    print(f"projects {sorted(failover.victim_slugs & {r.work.slug for r in results})} answered by instance, "
          f"before/after the kill: {dict(sorted(seen.items()))}", file=sys.stderr)


def embedded_run(scratch: Path, plan: Plan, args: argparse.Namespace, when: str) -> tuple[int, float, float]:
    """The plan on a fresh copy of the template through one embedded `rw serve`: (answered, seconds,
    CPU seconds of the server and its children)."""
    home = scratch / f"embedded-{when}"
    shutil.copytree(scratch / "template", home)
    with serving(home, workers=args.workers, log=scratch / f"serve-embedded-{when}.log") as (port, _):
        cpu = tree_cpu_s()
        done, took = server_round(port, agent_queues(plan), args.seconds)
        cpu = tree_cpu_s() - cpu
    print(f"embedded ({when}): {len(done)} submissions in {took:.1f}s ({len(done) / took:.1f}/s), "
          f"{cpu / took:.2f} cores, {1000 * cpu / max(1, len(done)):.0f} ms CPU per submission", file=sys.stderr)
    return len(done), took, cpu


def main_remote(args: argparse.Namespace) -> int:
    """The embedded single instance, the two-instance deployment, the embedded one again, on copies of one home."""
    scratch = Path(tempfile.mkdtemp(prefix="rw-load-remote-"))
    try:
        plan = build(scratch / "template", projects=args.projects, agents=args.agents, per_project=args.per_project,
                     reject_every=args.reject_every, durable=not args.no_fsync)
        embedded, embedded_s, embedded_cpu = embedded_run(scratch, plan, args, "before")
        slugs = sorted({item.slug for item in plan.work})
        failover = load_remote.Failover()
        with load_remote.deployment(scratch / "template", scratch, slugs, lease_s=args.lease_s,
                                    free_port=free_port) as (dep, ports), \
                load_remote.instances(dep, ports, rw=RW, workers=args.workers, logs=scratch, lease_s=args.lease_s,
                                      wait_ready=wait_ready) as running:
            postgres = f"-p {load_remote.dsn_port(dep)} "  # the postmaster's command line
            servers, started = servers_cpu_s(postgres), {i.name: instance_cpu_s(i.proc.pid) for i in running}
            results, elapsed = remote_round(running, agent_queues(plan), args.seconds, failover,
                                            args.seconds * args.kill_at)
            parts = {part: spent - servers[part] for part, spent in servers_cpu_s(postgres).items()}
            parts["instances"] = parts["instances_git"] = 0.0
            for instance in running:  # the victim as it was just before the kill
                dead = instance.name == failover.victim
                own, ran = failover.victim_cpu if dead else instance_cpu_s(instance.proc.pid)
                parts["instances"] += own - started[instance.name][0]
                parts["instances_git"] += ran - started[instance.name][1]
            remote_cpu = sum(parts.values())  # both instances, PostgreSQL, moto and the git daemon
            checked = check_remote(dep.hosts, results)
        rate = len(results) / elapsed if elapsed else 0.0
        # The embedded run again, after: the two bracket the remote one, so a machine getting busier
        # or quieter meanwhile (it is shared) weighs on both sides alike.
        after, after_s, after_cpu = embedded_run(scratch, plan, args, "after")
        embedded_rate = (embedded + after) / (embedded_s + after_s) if embedded_s + after_s else 0.0
        report_takeover(results, failover)
        latencies = [r.ms for r in results if r.error is None]
        summary = {
            "submissions": len(results), "lost": checked["lost"], "duplicated": checked["duplicated"],
            "errors": checked["errors"] + checked["problems"], "crash_rows": checked["crash_rows"],
            "replays": checked["replays"], "remote_per_s": round(rate, 2), "embedded_per_s": round(embedded_rate, 2),
            "ratio": round(rate / embedded_rate, 3) if embedded_rate else None,
            # CPU per answered submission, servers and git included: under a machine busy with other
            # work the ratio follows these (both sides get the same cores), when idle the parallelism.
            "remote_cpu_ms": round(1000 * remote_cpu / max(1, len(results)), 1),
            "embedded_cpu_ms": round(1000 * (embedded_cpu + after_cpu) / max(1, embedded + after), 1),
            # remote_cpu_ms by part: where the remote CPU went (the killed instance's up to its kill)
            "remote_cpu_ms_by_part": {part: round(1000 * spent / max(1, len(results)), 1)
                                      for part, spent in parts.items()},
            "remote_cores": round(remote_cpu / elapsed, 2) if elapsed else None,
            "embedded_cores": round((embedded_cpu + after_cpu) / (embedded_s + after_s), 2)
            if embedded_s + after_s else None,
            "load_avg": round(os.getloadavg()[0], 2),
            "failover_s": round(failover.seconds, 2) if failover.seconds is not None else None,
            **phase_rates(results, failover),
            "p50_ms": round(statistics.median(latencies), 1) if latencies else None,
            "p95_ms": round(percentile(latencies, 0.95), 1) if latencies else None,
            "agents": args.agents, "projects": args.projects, "workers": args.workers, "seconds": args.seconds,
            "lease_s": args.lease_s, "fsync": not args.no_fsync,
        }
        print(f"remote: {len(results)} submissions in {elapsed:.1f}s ({rate:.1f}/s); instance {failover.victim} "
              f"killed, failover {summary['failover_s']} s", file=sys.stderr)
        if args.keep:
            shutil.copytree(scratch, args.keep, dirs_exist_ok=True)
        print(json.dumps(summary))
        ok = summary["lost"] == summary["duplicated"] == 0 and summary["failover_s"] is not None
        return 0 if ok else 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
