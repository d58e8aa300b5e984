"""Benchmark (issue 26): how many contributions ONE busy project lands per second when 16 agents
submit at once through `rw serve`, beside a bare-git loop landing the same patches one by one.

Set-up (not timed): a home with one project of `--findings` findings over `--sources` sources
(10,000 over 500 by default, the project of scripts/bench_submit.py), `--agents` registered agents
(two per operator) and `--planned` extract leaves, written in the one corpus commit. Every planned
submission creates three findings no other creates, so all can land in any order on the moving tip.

Measurement:
- service: `rw serve` (loopback, `--workers`) on a copy of the home; every agent submits from its
  queue, one connection per submission as `rw submit --server` makes, as fast as it can for
  `--seconds`, after `--warmup` untimed submissions one by one that pay each worker's cold start (checked
  like the rest, not counted in the rate). `landings_per_s` = accepted verdicts / elapsed; p50/p99 of each submission's
  round trip. The service's peak memory (`peak_rss_mb`) is the largest sum of the proportional set
  size (PSS, /proc/PID/smaps_rollup) over the server's process group (the server and its workers),
  sampled every 0.25 s from start-up to the end of the timed round: the forked workers share pages
  with the server, which PSS counts once. The sum of VmHWM, which counts those pages in every
  process, is printed beside it (`vmhwm_sum_mb`). `server_cpu_ms_per_landing` is the group's user +
  system CPU in the timed round over its landings.
- bare git: on another copy of the same repository, the same patches the service landed, one after
  another, each `git apply --cached` (on one index read from the tip once), `git write-tree`,
  `git commit-tree -p <previous>`, `git update-ref`, for at most `--seconds`. `bare_git_per_s` =
  patches / elapsed; `ratio` = landings_per_s / bare_git_per_s (issue 26 target >= 5).
- repository growth: `repo_kb_per_landing` = the served repository's object store (loose files
  and packs) at the end of the timed round minus at its start, over its landings, with the packing
  passes the service ran meanwhile (verifier.store.upkeep); `loose_objects_after` = git's estimate
  of the loose objects left.
- checks afterwards, on the service's copy: `lost` = acknowledged ACCEPTED submissions whose
  verdict commit is not a contribution commit on main, or that have no accepted ledger row;
  `duplicated` = a contribution (trace) with more than one ledger row or contribution commit;
  `errors` = anything but an accepted verdict; `rw ledger --verify` must pass.

Fsync is on (durable) unless `--no-fsync`. Last line: one JSON object with landings_per_s,
bare_git_per_s, ratio, p50_ms, p99_ms, lost, duplicated, peak_rss_mb (and errors, landed, settings).
Quick run: `python scripts/bench_throughput.py --findings 1000 --sources 50 --seconds 5`.
`--profile N` also runs N warm landings in process through the service's own submit (journal,
pipeline, notifier; no HTTP) under cProfile and prints the ms of each phase (PHASES below).

Measured 2026-12-01 on the shared 2-core machine (7 sessions, load average 5-8: noisy, read as
orders of magnitude), before group commit:
- 10,000 findings, 16 agents, 20 s, fsync on, two runs: landings_per_s 2.75 / 4.55, bare_git_per_s
  10.7 / 33.7, ratio 0.26 / 0.135 (target >= 5), p50 2.7 / 2.3 s, p99 17.4 / 12.6 s, lost 0,
  duplicated 0, peak_rss_mb 427 / 444 (sum of VmHWM over the server and 2 workers, ~175+150+112;
  target <= 400). The first landing after start took 60-70 s (the later warm-ups 0.4-1.6 s); with
  the warm-ups sent at once, three queued on the project lock past its wait (503): hence the
  one-by-one warm-up.
- 1,000 findings, same: 2.3-4.2 landings/s, bare git 16-44/s, ratio 0.11-0.15.
Where one warm landing's ms go (1,000 findings, 200 open leaves, `--profile 10`): 82 ms in all;
stage 34 (trees, blobs and the two commits, each loose object fsynced by libgit2 as durable asks:
the bulk of "fsync", which the posix.fsync row, 2.7 ms for the anchor and trace files, does not
show), judge 18 (of it the extract check 11, rescore 3), notifier 10, trace stored 4, publish 3,
history check 2, journal < 1, lock acquire 0 (one caller). Under 16 agents the lock wait is the
rest: a served landing's p50 is ~30x its own work (1,000 findings: 2.4 s against 82 ms), since
each waits for the ones queued ahead, polling the lock (up to 50 ms between polls,
verifier/store/files.py). Two costs outside the steady state: the first landing after start
(seconds; 60-70 s at 10,000 findings under load) and each operator's first acceptance, whose
welcome message builds the project digest, parsing every open leaf (0.5-1 s with 200-1,000 open
leaves; verifier/messages/notifier.py -> pipeline/digest.py).
For group commit (issue 26 point 1) this said: the serial part per landing was stage + publish +
fsyncs (~37 ms) and judge (~18 ms) under one lock.

After group commit (ADR 0014: attempts queued behind a landing land as one group, one publish; a
ref move syncs the file system once instead of libgit2 fsyncing every object; a trace bundle is
synced once; leaf contracts and parsed files remembered by content):
- 10,000 findings, 16 agents, 20 s, fsync on, quiet machine (load < 1): landings_per_s 21.04,
  bare_git_per_s 24.36, ratio 0.864, p50 635 ms, p99 2.5 s, lost 0, duplicated 0, peak_rss_mb
  379 (sum of PSS; the VmHWM sum 476), server CPU 55.9 ms a landing. Under load (load average
  8-10): 9.2-10.3 landings/s against bare git 9.9-10.5/s, ratio 0.87-1.05.
- 1,000 findings under load: 10-15 landings/s (from 2.3-4.2), server CPU 44-58 ms a landing.
What bounds it now (py-spy over the served workers, GIL held): each member still writes its own
objects, about a dozen loose objects per landing (its blobs, the trees from the root down to each
changed shard folder, two commits), each a file libgit2 compresses and creates: the same work the
bare-git loop's write-tree and commit-tree do, about a fifth of the workers' CPU; the rest of a
landing's ~56 ms of CPU is its judging (YAML of the new findings, the extract check, the rescore),
the HTTP and trace ingest, the journal and the notifier, spread over two cores. Ratio >= 5 (five
times a loop whose own floor is those object writes) is not reached; writing a group's objects
into one pack instead of loose files, and judging in parallel processes, are the next levers.
Round two (issue 26: a thread keeps its repositories open, libgit2's cache bounded at 16 MB, the
notifier's diff over only the subtrees that differ and run after the answer, ancestry and ledger
reads remembered, the scores' memos): 10,000 findings, 16 agents, 20 s, fsync on, nothing else
running (load average 2.7, the benchmark's own): landings_per_s 25.85, bare_git_per_s 25.92, ratio
0.997, p50 506 ms, p99 1.74 s, lost 0, duplicated 0, peak_rss_mb 333 (VmHWM sum 428), server CPU
44 ms a landing. Under load 5-7 the same code landed 20-24/s against bare git 12-13/s (ratio
1.6-1.9) at 31-37 ms a landing: with more queued, groups are larger and their syncs shared by more.
What a landing still costs (py-spy): about a quarter is writing its ~34 loose objects (blobs,
trees from the root down, two commits), each a file; a fifth is judging; the notifier's pass a
sixth; the rest HTTP, trace ingest and the journal. Ratio >= 5 stays out of reach while each
landing writes loose objects: a group's objects written as one pack is the next step.
Round three (issue 26: a group writes its bookkeeping once, ADR 0014; a project's landings in a
process share one repository handle and its facts): each landing's ledger commit changes only its
use-score shards and the group's last carries the ledger segment, the other scores and the leaf
results, so a landing writes about 18 loose objects instead of 34. Under load (load average 6-9,
four other sessions running tests and benchmarks), 10,000 findings, 16 agents, 30 s: server CPU
29.9-31.8 ms a landing (from 40.7 in the same conditions before), 18.1-20.2 landings/s against
bare git 10.7-13.9/s (ratio 1.37-1.79), p50 680-760 ms, p99 2.2-2.3 s, lost 0, duplicated 0,
peak_rss_mb 318-324. On a quiet machine (load average 1.4, nothing else running): landings_per_s
29.44, bare_git_per_s 25.30, ratio 1.16, p50 458 ms, p99 1.49 s, lost 0, duplicated 0, peak_rss_mb
333, server CPU 39.9 ms a landing (quiet, fewer attempts queue behind a landing, so groups are
smaller and share less; round two: 25.85/s, ratio 0.997, 44 ms).
What is left (py-spy, GIL held): judging a fifth (the finding YAML and the
extract check, the rescore), the contribution's own loose objects a tenth, the notifier's pass
(after the answer) a seventh, HTTP and the multipart body a tenth. Ratio >= 5 would need about
8 ms of CPU a landing on these two cores, beside the agents' own: not reached.
`--profile N` also prints where the first submission of a fresh process goes: on this bench's
project, which was written by plumbing, it pays the notifier's catch-up over the 960 leaves the
set-up added and the one-time build of the rests index; a project the product wrote has both.
Round four (2026-12-02; YAML loaded by a loader made once, the notifier's stewards read once per
PROJECT.md), nothing else running, 30 s: landings_per_s 35.35, bare_git_per_s 29.71, ratio 1.19,
p50 367 ms, p99 1.25 s, lost 0, duplicated 0, peak_rss_mb 336.5, server CPU 33.6 ms a landing.
With large blobs kept by id (a landing read its ledger's last segment three times), 25 s, three
runs as the machine's speed moved (bare git 21.8-26.5/s): 31.6-36.1 landings/s, ratio 1.35-1.56,
32.1-35.7 ms a landing, p99 1.26-1.40 s, lost 0, duplicated 0, peak_rss_mb 343-348 (362 with
`--planned 1400`). Keeping the blobs written too (the segment a landing writes is the next one's
to read): 39.0/s against bare git 25.96/s, ratio 1.50, 29.2 ms a landing, p50 290 ms, p99 1.29 s,
peak_rss_mb 344 (every planned submission landed before the 25 s ran out); with `--planned 1400`
(a larger leaves/): 35.5/s against 23.05/s, ratio 1.54, 32.4 ms, peak_rss_mb 351; lost 0,
duplicated 0.
Twenty seconds later in a slower minute (bare git 22-23/s): `--no-fsync` 35.7/s at 34.2 ms,
`--workers 1` 30.0/s at 35.3 ms: the bound is CPU, not the syncs. In process (land_group on this
project, no HTTP or notifier), CPU a landing by group size: 29.8 ms alone, 21.3 in threes, 17.8
in eights: about 13 ms a group and 16 a landing. Of a landing's own part about 6 ms is objects:
some 14 trees (0.1-0.4 ms each; leaves/, one flat folder of ~1,900 contracts and results here,
0.9 ms, and its cost grows with every leaf a project keeps: 3 ms at 2,000 entries measured
alone, 18 ms at 10,000) and ~30 small blobs (use-score shards, index files, findings) at 0.07 ms.
Tried and not kept: libgit2's in-memory object store with one pack per group (pygit2 reads
objects through read_prefix, which that store lacks, and packing saved 0.6-0.8 ms a landing: the
cost is compressing the large trees, not creating files); loose objects at zlib level 1 (no
change); libgit2's cache holding blobs (no change). The next levers are structural: leaves/
sharded like findings/, and fewer files a landing (each new finding now writes four, each under
its own shard folders: itself, its use entry, its use-index line and its rests entry).
Round five (2026-12-02, a new machine: `python -c pass` 0.03-0.05 s of CPU against 0.025, and
pyenv's 3.11 built without profile-guided optimisation): with `--planned 1400`, on pyenv's Python
30.2/s against bare git 23.3/s (ratio 1.30, 37.6 ms a landing), on the distribution's 3.11, which
scripts/setup.sh now prefers, 33.3-34.2/s against 26.5-28.0 (ratio 1.19-1.32, 32.9-33.1 ms); on
a tmpfs 36.7/s at 32.2 ms (the file system is not the bound). The repository grew by about 200
KB a landing (43 loose object files a landing, each at least a 4 KB block): 7 MB a second. Landed
here: a packing pass in the background past 6,700 loose objects (verifier.store.upkeep, `git
repack -d` at low priority, geometric once packs pile up); the repository then grows by 35-42 KB
a landing (`repo_kb_per_landing`), and the passes cost their CPU beside the landings: 28.0-28.2
landings/s against bare git 25.5-26.6 (ratio 1.05-1.10), 45-50 ms of server CPU a landing,
peak_rss_mb 348-396 (the git pass's own memory is in the group's sum), lost 0, duplicated 0.
Round six (2026-12-02, a new, faster machine, quiet), 20 s: 51.55 landings/s against bare git
46.19/s, ratio 1.12, p50 222 ms, p99 824 ms, lost 0, duplicated 0, peak_rss_mb 358, 23.9 ms of
server CPU a landing; two 5 s runs with `--profile 40`: ratio 1.10 and 1.12. A warm landing in
process, 27 ms of wall time: judging 7.1 ms (the extract check 3.6, the rescore 1.6), staging
6.7 (the tree writes 3.75 of it), publishing 3.0, the trace stored 2.2, the journal 1.7, the
history check 1.4, the trace's ingest and scan 0.8. What holds the ratio: the bare-git loop is
about 22 ms of four git processes a patch here, so 5x is 231 landings/s: 8.7 ms of CPU a landing
on the two cores, the sixteen agents' own work included; what no group shares (a submission's
checks, its trace stored, its journal rows; its HTTP besides) is about 12 ms of it alone.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

from verifier.agentkit.bundle import TraceRecorder
from verifier.agentkit.objects import finding_file, source_files
from verifier.agentkit.workspace import creation_patch
from verifier.audits.audit import verify_ledger
from verifier.client.http import Client
from verifier.constants import UPKEEP_LOOSE_OBJECTS
from verifier.formats.entries import SubmitEntry
from verifier.formats.leaf import LeafContract, LeafInputs
from verifier.formats.yamlout import dump_yaml
from verifier.pipeline.ledger import read_chain
from verifier.pipeline.writer import ProjectWriter
from verifier.service.config import ServiceConfig
from verifier.service.core import Service
from verifier.state.layout import default_write_rules, leaf_path
from verifier.store.gitrepo import VERIFIER_EMAIL
from verifier.store.home import Settings
from verifier.store.upkeep import loose_estimate
from verifier.text.extract import extract_text
from verifier.wiring import open_home
from verifier.writes.project import init_project

sys.path.insert(0, str(Path(__file__).resolve().parent))
import load  # from this script's folder, put on the path just above: the server harness

SLUG = "busy"
VENDORS = ["Tessellate", "Quillmark", "Kestrel", "Northgate", "Aurora", "Basalt", "Cobalt", "Drift"]
PER_SUBMISSION = 3


def sentence(source: int, index: int) -> str:
    vendor = VENDORS[(source + index) % len(VENDORS)]
    return (f"In quarter {index % 4 + 1} of 2026, {vendor} reported {source * 37 + index * 11} paying teams "
            f"for layer product {source}-{index}, up {index % 9 + 1}.{source % 10}% on the quarter before.")


def build(root: Path, *, sources: int, findings: int, agents: int, planned: int, durable: bool) -> list[load.Work]:
    """The home: one project with the corpus and every planned leaf in one commit; the planned work."""
    home = open_home(root)
    home.save_settings(Settings(durable=False, fetch="offline"))  # set-up needs no fsync
    home = open_home(root)
    now = datetime.now(UTC).replace(microsecond=0)
    registered = [(f"busy-agent-{n:02d}", f"busy-op-{n // 2:02d}") for n in range(agents)]
    tokens = [(handle, op, home.identities.add(handle, op, "agent", now)) for handle, op in registered]
    template = Path(tempfile.mkdtemp(prefix="rw-throughput-template-"))
    (template / "PROJECT.md").write_text(f"---\nproject: {SLUG}\n---\nThroughput benchmark project.\n")
    init_project(home, SLUG, now=now, template=template)
    shutil.rmtree(template)
    base = home.project(SLUG).tip()
    assert base is not None
    per_source = max(1, findings // sources)
    extra = -(-planned // sources) * PER_SUBMISSION  # new sentences each source needs for the planned work
    files: dict[str, bytes] = {}
    catalogue: list[tuple[str, str]] = []
    for s in range(sources):
        text = " ".join(sentence(s, k) for k in range(per_source + extra)) + "\n"
        made = source_files(url=f"https://busy.example.org/source/{s}", data=text.encode(), media_type="text/plain",
                            fetched_by="bench", retrieved_at=now, language="en", rights="public", published=None,
                            title=None, leaf_id=None, status="included")
        files.update(made)
        source_id = next(path for path in made if path.endswith(".yaml")).rsplit("/", 1)[1][:-5]
        derived = extract_text(text.encode(), "text/plain")
        catalogue.append((source_id, derived))
        for k in range(per_source):
            path, data = finding_file(source_id=source_id, source_text=derived, excerpt=sentence(s, k),
                                      statement=f"Claim {k} of source {s}.", limitation="Synthetic.",
                                      leaf_id="bench-corpus")
            files[path] = data
    work: list[load.Work] = []
    for n in range(planned):
        s = n % sources
        source_id, derived = catalogue[s]
        leaf_id = f"extract-{n:05d}"
        contract = LeafContract(leaf_id=leaf_id, kind="extract", inputs=LeafInputs(source_id=source_id),
                                base_revision=base, may_write=default_write_rules("extract"), check="extract",
                                created_at=now, created_by="planner", expires_at=now + timedelta(days=1))
        files[leaf_path(leaf_id)] = dump_yaml(contract.model_dump(mode="json", exclude_none=True))
        first = per_source + (n // sources) * PER_SUBMISSION
        patch = creation_patch(dict(
            finding_file(source_id=source_id, source_text=derived, excerpt=sentence(s, k), statement=f"New claim {k}.",
                         limitation="Synthetic benchmark finding.", leaf_id=leaf_id)
            for k in range(first, first + PER_SUBMISSION)))
        handle, operator, token = tokens[n % agents]
        trace = TraceRecorder()
        trace.add(now - timedelta(seconds=3), "tool_call", {"tool": "rw source text", "args": [SLUG, source_id]})
        trace.add(now - timedelta(seconds=2), "tool_result", derived[:500])
        trace.add(now - timedelta(seconds=1), "final", f"{PER_SUBMISSION} findings, each quoted exactly.")
        bundle = trace.bundle(leaf_id=leaf_id, agent=handle, operator=operator, base_revision=base, patch=patch,
                              level="L1")
        work.append(load.Work(SLUG, leaf_id, handle, token, bundle, patch, "accepted"))
    with ProjectWriter.open(home, SLUG) as writer:
        writer.land(SubmitEntry(at=now, action="human", actor="bench", actor_type="verifier",
                                description=f"throughput corpus: {sources} sources, {sources * per_source} findings, "
                                            f"{planned} leaves"), bookkeeping=files)
    home.save_settings(Settings(durable=durable, fetch="offline"))
    home.upkeep.wait_idle()  # the corpus packed (verifier.store.upkeep) before the home is copied
    return work


def objects_kb(repo: Path) -> float:
    """The size of a repository's object store (loose files and packs), in KB."""
    total = 0
    for folder, _dirs, names in os.walk(repo / "objects"):
        for name in names:
            with contextlib.suppress(FileNotFoundError):  # a packing pass may remove it meanwhile
                total += (Path(folder) / name).stat().st_size
    return total / 1024


def peak_rss_mb(pgid: int) -> tuple[float, dict[int, float]]:
    """Sum of VmHWM (peak resident set) over the live processes of a process group, and each one's."""
    each: dict[int, float] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) != pgid:
                continue
            status = (stat.parent / "status").read_text()
        except (OSError, IndexError, ValueError):
            continue
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                each[int(stat.parent.name)] = int(line.split()[1]) / 1024
    return sum(each.values()), each


def _group_pids(pgid: int) -> list[Path]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[2]) == pgid:
                found.append(stat.parent)
        except (OSError, IndexError, ValueError):
            continue
    return found


def group_pss_mb(pgid: int) -> float:
    """The memory a process group uses now: the sum of each process's proportional set size (a page
    shared by n processes counts 1/n in each, so the forked workers' shared pages count once)."""
    total_kb = 0
    for proc in _group_pids(pgid):
        try:
            for line in (proc / "smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total_kb += int(line.split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return total_kb / 1024


class PeakMemory:
    """Samples a process group's PSS sum every `every_s` seconds in a thread; `peak` is the largest."""

    def __init__(self, pgid: int, every_s: float = 0.25) -> None:
        self.pgid, self.every_s, self.peak = pgid, every_s, 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, group_pss_mb(self.pgid))
            self._stop.wait(self.every_s)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, group_pss_mb(self.pgid))


def group_cpu_s(pgid: int) -> float:
    """User + system CPU seconds so far of the live processes of a process group (and their waited-for
    children, such as git)."""
    ticks = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid:
                ticks += sum(int(field) for field in fields[11:15])
        except (OSError, IndexError, ValueError):
            continue
    return ticks / os.sysconf("SC_CLK_TCK")


def serve_round(port: int, queues: dict[str, list[load.Work]], seconds: float) -> tuple[list[load.Result], float]:
    """Every agent submits from its queue as fast as it can until `seconds` pass."""
    results: list[load.Result] = []
    lock = threading.Lock()
    gate = threading.Event()
    deadline = [0.0]

    def agent(items: list[load.Work]) -> None:
        client = Client(f"http://127.0.0.1:{port}", items[0].token, retry_for_s=10.0, timeout_s=120.0)
        gate.wait()
        while items and time.monotonic() < deadline[0]:
            item = items.pop(0)
            started = time.perf_counter()
            try:
                reply = client.submit(item.slug, item.leaf_id, item.bundle, item.patch)
                result = load.classify(item, reply.status, reply.body)
                verdict = reply.body.get("verdict")
                result.commit = str(verdict.get("commit") or "") if isinstance(verdict, dict) else ""
            except Exception as exc:  # counted as an error, never hidden
                result = load.Result(item, None, None, None, 0.0, f"{type(exc).__name__}: {exc}")
            result.ms = (time.perf_counter() - started) * 1000
            with lock:
                results.append(result)

    threads = [threading.Thread(target=agent, args=(items,)) for items in queues.values() if items]
    return results, load.run_together(threads, gate, deadline, seconds, join_s=seconds + 180)


def check(home_dir: Path, results: list[load.Result]) -> dict[str, int]:
    """Acknowledged acceptances against main and the ledger."""
    home = open_home(home_dir)
    repo = home.project(SLUG)
    tip = repo.tip()
    problems = 0 if verify_ledger(repo, home.read_anchor(SLUG)).ok else 1
    rows = [row for _, row in read_chain(repo.view(tip)) if row.action == "submit"]
    per_trace = Counter(row.trace_id for row in rows)
    accepted_rows = Counter(row.trace_id for row in rows if row.outcome in ("accepted", "held"))
    contributions: list[str] = []
    commit = repo.commit(tip) if tip else None
    while commit is not None:
        if commit.author.email != VERIFIER_EMAIL:
            contributions.append(str(commit.id))
        commit = commit.parents[0] if commit.parents else None
    on_main = Counter(contributions)
    lost = duplicated = 0
    for result in results:
        trace = result.work.trace_id
        duplicated += per_trace[trace] > 1 or on_main[result.commit] > 1
        if result.outcome in ("accepted", "held"):
            lost += accepted_rows[trace] != 1 or result.commit not in on_main
    if len(contributions) != sum(accepted_rows.values()):
        print(f"{len(contributions)} contribution commits but {sum(accepted_rows.values())} accepted rows",
              file=sys.stderr)
        problems += 1
    errors = [r for r in results if r.error or r.status != 201 or r.outcome != "accepted"]
    for r in errors[:5]:
        print(f"error: {r.work.leaf_id}: {r.status} {r.outcome} {r.code} {r.error or ''}", file=sys.stderr)
    return {"lost": lost, "duplicated": duplicated, "errors": len(errors), "problems": problems}


def git(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(["git", *args], env=env, capture_output=True, check=True)
    return done.stdout.decode().strip()


def bare_git_loop(repo_dir: Path, patches: list[bytes], seconds: float) -> tuple[int, float]:
    """The same patches landed one after another with the git CLI; (patches landed, seconds)."""
    env = {**os.environ, "GIT_DIR": str(repo_dir), "GIT_INDEX_FILE": str(repo_dir / "bench-index"),
           "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "b@x"}
    ref = "refs/heads/bench-bare"
    tip = git(env, "rev-parse", "HEAD")
    git(env, "update-ref", ref, tip)
    git(env, "read-tree", tip)  # once: apply --cached needs an index, which then moves with the loop
    files = []
    for number, patch in enumerate(patches):
        path = repo_dir / f"bench-{number}.diff"
        path.write_bytes(patch)
        files.append(path)
    began = time.perf_counter()
    done = 0
    for path in files:
        if time.perf_counter() - began >= seconds:
            break
        git(env, "apply", "--cached", str(path))
        tree = git(env, "write-tree")
        tip = git(env, "commit-tree", tree, "-p", tip, "-m", "bench")
        git(env, "update-ref", ref, tip)
        done += 1
    return done, time.perf_counter() - began


# Where one landing's time goes on the served path: (label, file suffix, function), summed as
# cumulative time per landing. Nested rows (rescore inside judge, fsync inside both) overlap.
PHASES = [
    ("the whole served submission", "service/core.py", "submit"),
    ("  journal begin (sqlite)", "service/journal.py", "begin"),
    ("  journal finish", "service/journal.py", "finish"),
    ("  pipeline submit (all of it)", "pipeline/submit.py", "submit"),
    ("    trace ingest + secret scan", "pipeline/submit.py", "ingest_trace"),
    ("    patch secret gate", "pipeline/submit.py", "gate_patch"),
    ("    trace stored", "pipeline/submit.py", "store_trace"),
    ("    project lock acquire", "store/files.py", "_acquire"),
    ("    history check on open", "pipeline/writer.py", "_check_history"),
    ("    judge (tip read, checks, rescore)", "pipeline/submit.py", "judge"),
    ("      kind check (extract)", "pipeline/submit.py", "kind_check"),
    ("      rescore", "pipeline/submit.py", "rescore"),
    ("    stage (trees, blobs, commits)", "pipeline/writer.py", "_stage"),
    ("    publish (branch move, anchor)", "pipeline/writer.py", "_publish"),
    ("  notifier after the verdict", "messages/notifier.py", "landed"),
    ("    of it: the digest (reads open leaves)", "pipeline/digest.py", "digest"),
    ("fsync, wherever called", "~", "<built-in method posix.fsync>"),
]


def profile(root: Path, work: list[load.Work], count: int) -> None:
    """`count` warm submissions, one after another, through the service's own submit (the served
    path without HTTP: journal, pipeline, notifier) under cProfile; ms per landing by phase."""
    service = Service(ServiceConfig(home=root))

    def one(item: load.Work) -> None:
        actor = service.authenticate(item.token)
        service.submit(actor, item.token, item.slug, item.leaf_id, item.bundle, item.patch, None)

    # Warm: the caches, and every agent's (so every operator's) first acceptance, whose welcome
    # message needs the project digest; reported apart from the steady landings.
    agents = len({item.agent for item in work})
    began = time.perf_counter()
    cold = cProfile.Profile()
    cold.enable()
    one(work[0])
    cold.disable()
    print(f"profile: the first submission of the process {(time.perf_counter() - began) * 1000:.1f} ms; where:",
          file=sys.stderr)
    pstats.Stats(cold, stream=sys.stderr).sort_stats("cumulative").print_stats(25)
    for item in work[1:agents]:
        one(item)
    print(f"profile: the first {agents} submissions (cold start, first acceptances) "
          f"{(time.perf_counter() - began) * 1000 / agents:.1f} ms each", file=sys.stderr)
    profiler = cProfile.Profile()
    began = time.perf_counter()
    profiler.enable()
    for item in work[agents:agents + count]:
        one(item)
    profiler.disable()
    wall = (time.perf_counter() - began) * 1000 / count
    table = pstats.Stats(profiler).stats  # type: ignore[attr-defined]  # (file, line, name) -> (cc, nc, tt, ct, callers)
    print(f"profile: {count} warm submissions in process, {wall:.1f} ms each (wall)", file=sys.stderr)
    for label, where, name in PHASES:
        ms = sum(row[3] for (file, _, func), row in table.items() if func == name and file.endswith(where))
        print(f"  {label:<44} {1000 * ms / count:8.1f} ms", file=sys.stderr)
    print("profile: the warm submissions' costliest calls (cumulative):", file=sys.stderr)
    pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(60)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--findings", type=int, default=10_000)
    parser.add_argument("--sources", type=int, default=500)
    parser.add_argument("--agents", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=20.0, help="how long the agents submit")
    parser.add_argument("--planned", type=int, default=960, help="leaves (planned submissions) in all")
    parser.add_argument("--workers", type=int, default=2, help="rw serve worker processes")
    parser.add_argument("--warmup", type=int, default=4, help="untimed submissions first, one by one (cold start)")
    parser.add_argument("--no-fsync", action="store_true", help="durable=false (default: fsync on)")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="also profile N warm landings in process on the served path (stderr)")
    parser.add_argument("--keep", type=Path, help="keep the homes and the server log here")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="rw-throughput-"))
    try:
        began = time.perf_counter()
        work = build(scratch / "template", sources=args.sources, findings=args.findings, agents=args.agents,
                     planned=args.planned, durable=not args.no_fsync)
        per_source = max(1, args.findings // args.sources)
        print(f"set-up: 1 project, {args.sources * per_source} findings, {args.agents} agents, {len(work)} planned "
              f"submissions in {time.perf_counter() - began:.1f}s", file=sys.stderr)
        shutil.copytree(scratch / "template", scratch / "server")
        shutil.copytree(scratch / "template", scratch / "git")
        queues: dict[str, list[load.Work]] = {}
        for item in work:
            queues.setdefault(item.agent, []).append(item)
        with load.serving(scratch / "server", workers=args.workers, log=scratch / "serve.log") as (port, group):
            # Untimed: a first submission per worker pays that process's cold start (caches built
            # from the corpus), which is not the steady rate this measures; checked like the rest.
            # One after another: at once, the cold starts queue on the project lock past its wait (503).
            memory = PeakMemory(group).__enter__()  # from the start: a cold start may be the peak
            warm: list[load.Result] = []
            for agent, items in list(queues.items())[:args.warmup]:
                warm += serve_round(port, {agent: [items.pop(0)]}, 600)[0]
            print(f"warm-up: {len(warm)} submissions one by one, "
                  f"{', '.join(f'{r.ms:.0f}' for r in warm)} ms, not timed", file=sys.stderr)
            cpu_before = group_cpu_s(group)
            served_repo = scratch / "server" / "projects" / f"{SLUG}.git"
            objects_before = objects_kb(served_repo)
            results, elapsed = serve_round(port, queues, args.seconds)
            memory.__exit__()
            cpu_s = group_cpu_s(group) - cpu_before
            objects_after = objects_kb(served_repo)
            loose_after = loose_estimate(served_repo)
            rss, each = peak_rss_mb(group)
        if not any(queues.values()):
            print("warning: the agents ran out of planned submissions; raise --planned", file=sys.stderr)
        checked = check(scratch / "server", warm + results)
        landed = [r for r in results if r.outcome == "accepted"]
        latencies = [r.ms for r in results if r.error is None]
        rate = len(landed) / elapsed if elapsed else 0.0
        repo_dir = open_home(scratch / "git").project(SLUG).path
        git_done, git_s = bare_git_loop(repo_dir, [r.work.patch for r in landed] or [work[0].patch], args.seconds)
        git_rate = git_done / git_s if git_s else 0.0
        summary = {
            "landings_per_s": round(rate, 2), "bare_git_per_s": round(git_rate, 2),
            "ratio": round(rate / git_rate, 3) if git_rate else None,
            "p50_ms": round(statistics.median(latencies), 1) if latencies else None,
            "p99_ms": round(load.percentile(latencies, 0.99), 1) if latencies else None,
            "lost": checked["lost"], "duplicated": checked["duplicated"], "peak_rss_mb": round(memory.peak, 1),
            "vmhwm_sum_mb": round(rss, 1),
            "errors": checked["errors"] + checked["problems"], "landed": len(landed), "submissions": len(results),
            "findings": args.sources * per_source, "agents": args.agents, "workers": args.workers,
            "seconds": args.seconds, "fsync": not args.no_fsync,
            "server_cpu_ms_per_landing": round(1000 * cpu_s / len(landed), 1) if landed else None,
            "repo_kb_per_landing": round((objects_after - objects_before) / len(landed), 1) if landed else None,
            "loose_objects_after": loose_after,
        }
        print(f"service: {len(landed)} of {len(results)} submissions landed in {elapsed:.1f}s ({rate:.2f}/s), "
              f"p50 {summary['p50_ms']} ms, p99 {summary['p99_ms']} ms", file=sys.stderr)
        print(f"server CPU {cpu_s:.1f} s in the timed round: {summary['server_cpu_ms_per_landing']} ms a landing",
              file=sys.stderr)
        print(f"bare git: {git_done} patches in {git_s:.1f}s ({git_rate:.2f}/s); ratio {summary['ratio']} "
              f"(target >= 5)", file=sys.stderr)
        print(f"peak memory {memory.peak:.1f} MB (sum of PSS over the {len(each)} processes, sampled; target "
              f"<= 400); the sum of their VmHWM, which counts the workers' shared pages in each, "
              f"{rss:.1f} MB ({', '.join(f'{mb:.0f}' for mb in sorted(each.values(), reverse=True))})",
              file=sys.stderr)
        print(f"repository: {summary['repo_kb_per_landing']} KB more objects a landing over the timed round "
              f"(packed in the background past {UPKEEP_LOOSE_OBJECTS} loose objects); about {loose_after} "
              "loose at its end", file=sys.stderr)
        print(f"lost {summary['lost']}, duplicated {summary['duplicated']}, errors {summary['errors']}",
              file=sys.stderr)
        if args.profile:
            shutil.copytree(scratch / "template", scratch / "profile")
            profile(scratch / "profile", work, args.profile)
        if args.keep:
            shutil.copytree(scratch, args.keep, dirs_exist_ok=True)
        print(json.dumps(summary))
        return 0 if summary["lost"] == summary["duplicated"] == summary["errors"] == 0 else 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
