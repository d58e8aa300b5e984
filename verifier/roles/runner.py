"""The runners (design §10): wake each project's Planner on its cadence, and run worker agents.

One `tick` wakes every project's Planner (a Planner that is not due does nothing: its
`loop_cadence` decides), runs the improvement loop when it is due (`maintain_if_due`), then,
when a worker command is configured, claims up to N open leaves
for the worker agent and runs the command once per leaf, N at once, each with a wall-clock
limit. The command gets the leaf in its environment:

    RW_PROJECT  the project slug          RW_LEAF    the leaf id
    RW_SERVER   the service URL (if any)  RW_TOKEN   the worker agent's bearer token
    RW_HOME     the verifier home

`$RW_LEAF`, `$RW_PROJECT`, `$RW_SERVER` and `$RW_HOME` (or `${...}`) in the command's words are
replaced by their values, as a shell would (`claude -p "Do researchwiki leaf $RW_LEAF"`); the
command runs without a shell, and `$RW_TOKEN` is never expanded: the token stays off command lines.
Its stdout and stderr go to $RW_HOME/runs/<slug>/<leaf_id>-<time>.log. A worker still running at
its limit gets SIGTERM, then SIGKILL five seconds later (its whole process group). Claims are
taken before the command starts, through the service when a server URL is given (as the agent
would) or the local Commons otherwise, and last as long as the limit. A project whose loop has spent its
`budget_per_loop` (usd or tokens from the costs its attempts disclosed, or leaves_max attempts:
roles.budget) gets no worker until the loop moves on, and the report says so (`budget_spent`).

`--worker claude` or `--worker codex` runs a real agent CLI per leaf instead of a command of one's
own: the command is then `rw worker run $RW_PROJECT $RW_LEAF --agent NAME --server URL --limit L`
(verifier.roles.agentworker), and the run's limit is L plus `AGENT_STEPS_S` for its `rw work`,
import, check and submit steps.

A worker that exits non-zero or is stopped at the limit, and left no ledger row on its leaf since
it started (an agent worker records its own agent's crash), gets one: a `crash` row with the
reason (verifier.writes.crash), and its claim is released, so the leaf is claimable again at once.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from verifier.agentkit.modelworker import validation_worker
from verifier.client.http import Client
from verifier.commons.adapter import ClaimConflict, Commons
from verifier.constants import AGENT_STEPS_S
from verifier.errors import ConflictError, FormatError, LedgerIntegrityError, NotFound, VerifierError
from verifier.pipeline.ledger import read_chain
from verifier.roles.budget import loop_spend, worker_stop
from verifier.roles.maintainer import configured_backend, due_for_maintenance, run_pass
from verifier.roles.planner import wake
from verifier.roles.planning import cadence
from verifier.roles.processes import TERM_GRACE_S, stop_group
from verifier.roles.proposer import run_proposer
from verifier.state.project import ProjectView, rows_from
from verifier.store.home import Home
from verifier.store.identities import Actor
from verifier.ui.board import board
from verifier.writes.crash import record_agent_crash

EXPANDED = ("RW_PROJECT", "RW_LEAF", "RW_SERVER", "RW_HOME")
_VARIABLE = re.compile(r"\$(?:\{(" + "|".join(EXPANDED) + r")\}|(" + "|".join(EXPANDED) + r")(?![A-Za-z0-9_]))")


def command_words(command: str, env: dict[str, str]) -> list[str]:
    """The worker command's words, with the runner's own non-secret variables expanded."""
    return [_VARIABLE.sub(lambda m: env[m.group(1) or m.group(2)], word) for word in shlex.split(command)]


@dataclass(frozen=True)
class WorkerConfig:
    command: str
    token: str
    workers: int = 1
    limit_s: float = 900.0
    server: str | None = None


def agent_worker(agent: str, token: str, server: str, workers: int = 1, limit_s: float = 900.0,
                 rw: str = "rw") -> WorkerConfig:
    """The runner's worker for a real agent CLI: `rw worker run` per leaf, its limit plus the steps'."""
    command = shlex.join([rw, "worker", "run", "$RW_PROJECT", "$RW_LEAF", "--agent", agent, "--server", server,
                          "--limit", f"{max(1, int(limit_s))}s"])
    return WorkerConfig(command, token, workers, limit_s + AGENT_STEPS_S, server)


@dataclass(frozen=True)
class Run:
    slug: str
    leaf_id: str
    exit_code: int | None  # None: killed at the wall-clock limit
    seconds: float
    log: Path
    crash_seq: int | None = None  # the crash row the runner landed for this run, if it had to


@dataclass
class TickReport:
    woke: dict[str, str]  # slug -> what the wake did
    runs: list[Run]
    maintenance: str | None = None  # what the improvement loop did, when a pass was due
    budget: dict[str, str] = field(default_factory=dict)  # slug -> why no worker was started (budget spent)


def wake_all(home: Home, slugs: list[str], now: datetime, commons: Commons) -> dict[str, str]:
    woke: dict[str, str] = {}
    for slug in slugs:
        try:
            result = wake(home, slug, now, commons=commons)
        except (NotFound, FormatError, ConflictError, LedgerIntegrityError) as exc:
            woke[slug] = f"error: {exc}"
            continue
        if result.skipped:
            woke[slug] = result.skipped
        elif result.landed is None:
            woke[slug] = "nothing new"
        else:
            count = len(result.plan.leaves) if result.plan else 0
            woke[slug] = f"plan landed with {count} leaves"
    return woke


def budget_spent(home: Home, slug: str, now: datetime) -> str | None:
    """Why no more leaves of `slug` may be worked this loop (PROJECT.md's budget_per_loop, from the
    costs its attempts disclosed: roles.budget), or None while there is budget left."""
    repo = home.project(slug)
    tip = repo.tip()
    if tip is None:
        return None
    view = repo.view(tip)
    project = ProjectView(view, tip).project
    return worker_stop(project.budget_per_loop,
                       loop_spend((row for _line, row in read_chain(view)), now, cadence(project.loop_cadence)),
                       project.loop_cadence)


def pick_leaves(home: Home, slugs: list[str], commons: Commons, now: datetime, count: int) -> list[tuple[str, str]]:
    """Open, unclaimed leaves for the workers: warm ones first, then by expiry."""
    found: list[tuple[bool, datetime, str, str]] = []
    for slug in slugs:
        repo = home.project(slug)
        tip = repo.tip()
        if tip is None:
            continue
        for leaf in board(repo.view(tip), commons.claims(slug, now=now), now):
            if leaf.state == "open":
                found.append((not leaf.contract.warm, leaf.contract.expires_at, slug, leaf.contract.leaf_id))
    return [(slug, leaf_id) for _warm, _expiry, slug, leaf_id in sorted(found)[:count]]


def claim(config: WorkerConfig, agent: Actor, commons: Commons, slug: str, leaf_id: str, now: datetime) -> bool:
    """Claim the leaf for the worker agent for the length of its run."""
    if config.server:
        reply = Client(config.server, config.token, retry_for_s=10.0).post_json(
            f"/projects/{slug}/leaves/{leaf_id}/claim", {"ttl_s": max(1, int(config.limit_s))})
        return reply.status == 200
    try:
        commons.claim(slug, leaf_id, agent.handle, until=now + timedelta(seconds=config.limit_s), now=now)
    except ClaimConflict:
        return False
    return True


def run_workers(home: Home, config: WorkerConfig, leaves: list[tuple[str, str]],
                clock: Callable[[], float] = time.monotonic) -> list[Run]:
    """Start one worker per leaf, all at once, and wait for each up to the limit."""
    started: list[tuple[str, str, subprocess.Popen[bytes], Path, float]] = []
    for slug, leaf_id in leaves:
        log = home.layout.runs(slug) / f"{leaf_id}-{time.strftime('%Y%m%dT%H%M%S')}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "RW_PROJECT": slug, "RW_LEAF": leaf_id, "RW_TOKEN": config.token,
               "RW_SERVER": config.server or "", "RW_HOME": str(home.root)}
        with log.open("wb") as out:
            proc = subprocess.Popen(command_words(config.command, env), env=env, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        started.append((slug, leaf_id, proc, log, clock()))
    runs = []
    for slug, leaf_id, proc, log, began in started:
        remaining = max(0.0, config.limit_s - (clock() - began))
        try:
            code: int | None = proc.wait(timeout=remaining)
        except subprocess.TimeoutExpired:
            stop_group(proc)
            code = None
            with log.open("ab") as out:
                out.write(f"\n[rw runner] stopped at the wall-clock limit of {config.limit_s:g}s\n".encode())
        runs.append(Run(slug, leaf_id, code, clock() - began, log))
    return runs


def ledger_length(home: Home, slug: str) -> int:
    repo = home.project(slug)
    tip = repo.tip()
    return 0 if tip is None else len(rows_from(repo.view(tip), 0))


def left_a_row(home: Home, slug: str, leaf_id: str, since: int) -> bool:
    """Whether a row on `leaf_id` landed at seq `since` or later (a submission, or the agent
    worker's own crash row)."""
    repo = home.project(slug)
    tip = repo.tip()
    return tip is not None and any(row.leaf_id == leaf_id for row in rows_from(repo.view(tip), since))


def crash_reason(run: Run, limit_s: float) -> str | None:
    """Why a worker run is a crash (pure), or None when it exited 0."""
    if run.exit_code is None:
        return (f"worker stopped at the wall-clock limit of {limit_s:g}s (SIGTERM to its process group, "
                f"SIGKILL {TERM_GRACE_S:g}s later)")
    if run.exit_code < 0:
        return f"worker killed by signal {-run.exit_code}"
    if run.exit_code != 0:
        return f"worker exited with code {run.exit_code}"
    return None


def release(config: WorkerConfig, agent: Actor, commons: Commons, slug: str, leaf_id: str, now: datetime) -> None:
    """Give a crashed worker's claim back, as it was taken (the service, or the local Commons)."""
    if config.server:
        Client(config.server, config.token, retry_for_s=10.0).request(
            "DELETE", f"/projects/{slug}/leaves/{leaf_id}/claim")
    else:
        commons.release(slug, leaf_id, agent.handle, now=now)


def record_crashes(home: Home, config: WorkerConfig, agent: Actor, commons: Commons, runs: list[Run],
                   since: dict[str, int], now: datetime) -> list[Run]:
    """One crash row per failed run that left no row on its leaf; its claim released."""
    out = []
    for run in runs:
        reason = crash_reason(run, config.limit_s)
        if reason is None or left_a_row(home, run.slug, run.leaf_id, since[run.slug]):
            out.append(run)
            continue
        row = record_agent_crash(home, run.slug, run.leaf_id, agent, f"{reason} (log {run.log.name})", now=now,
                                 duration_s=run.seconds)
        release(config, agent, commons, run.slug, run.leaf_id, now)
        out.append(Run(run.slug, run.leaf_id, run.exit_code, run.seconds, run.log, row.seq))
    return out


def maintain_if_due(home: Home, now: datetime) -> str | None:
    """The improvement loop's schedule (docs/loop.md): after `maintainer_every` accepted or rejected
    leaves of a kind, one Wiki Maintainer pass, then one Skill Proposer run when a model and a
    validation worker are configured. None when nothing was due."""
    if not due_for_maintenance(home):
        return None
    backend = configured_backend(home)
    passed = run_pass(home, now=now, backend=backend)
    done = f"maintainer pass: {len(passed.written)} pages written"
    proposer = configured_backend(home, "propose")
    worker = validation_worker(home)
    if proposer is None or worker is None:
        return done + "; no proposer run (needs a `propose` model and a validation worker in config.json)"
    try:
        decision = run_proposer(home, backend=proposer, worker=worker, now=now)
    except VerifierError as exc:  # a model that failed, a proposal refused: the pass still counts
        return done + f"; proposer: {exc}"
    return done + f"; proposer: {decision.kind} section {decision.outcome}"


def tick(home: Home, slugs: list[str], now: datetime, commons: Commons,
         config: WorkerConfig | None = None) -> TickReport:
    """One pass of the runner: wake the Planners, then run up to N workers on open leaves."""
    report = TickReport(wake_all(home, slugs, now, commons), [], maintain_if_due(home, now))
    if config is None or config.workers <= 0:
        return report
    agent = commons.authenticate(config.token)
    for slug in slugs:  # a project whose loop spent its budget gets no worker until the loop moves on
        note = budget_spent(home, slug, now)
        if note is not None:
            report.budget[slug] = note
            report.woke[slug] = f"{report.woke.get(slug, '')}; no workers: {note}".lstrip("; ")
    funded = [slug for slug in slugs if slug not in report.budget]
    chosen = [(slug, leaf_id) for slug, leaf_id in pick_leaves(home, funded, commons, now, config.workers)
              if claim(config, agent, commons, slug, leaf_id, now)]
    since = {slug: ledger_length(home, slug) for slug, _leaf in chosen}
    runs = run_workers(home, config, chosen)
    # The crashes are seen when the runs end: the tick's `now` moved on by the longest run.
    seen = now + timedelta(seconds=int(max((run.seconds for run in runs), default=0.0)))
    report.runs = record_crashes(home, config, agent, commons, runs, since, seen)
    return report
