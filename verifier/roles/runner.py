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
would) or the local Commons otherwise, and last as long as the limit: a worker that dies leaves
its leaf to return to the pool when the claim expires. A project whose loop has spent its
`budget_per_loop` (usd or tokens from the costs its attempts disclosed, or leaves_max attempts:
roles.budget) gets no worker until the loop moves on, and the report says so (`budget_spent`).
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from verifier.agentkit.modelworker import validation_worker
from verifier.client.http import Client
from verifier.commons.adapter import ClaimConflict, Commons
from verifier.errors import ConflictError, FormatError, LedgerIntegrityError, NotFound, VerifierError
from verifier.pipeline.ledger import read_chain
from verifier.roles.budget import loop_spend, worker_stop
from verifier.roles.maintainer import configured_backend, due_for_maintenance, run_pass
from verifier.roles.planner import wake
from verifier.roles.planning import cadence
from verifier.roles.proposer import run_proposer
from verifier.state.project import ProjectView
from verifier.store.home import Home
from verifier.store.identities import Actor
from verifier.ui.board import ContractCache, board

TERM_GRACE_S = 5.0
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


@dataclass(frozen=True)
class Run:
    slug: str
    leaf_id: str
    exit_code: int | None  # None: killed at the wall-clock limit
    seconds: float
    log: Path


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
    cache = ContractCache()
    for slug in slugs:
        repo = home.project(slug)
        tip = repo.tip()
        if tip is None:
            continue
        for leaf in board(repo.view(tip), cache, commons.claims(slug, now=now), now):
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
            _stop(proc)
            code = None
            with log.open("ab") as out:
                out.write(f"\n[rw runner] stopped at the wall-clock limit of {config.limit_s:g}s\n".encode())
        runs.append(Run(slug, leaf_id, code, clock() - began, log))
    return runs


def _stop(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=TERM_GRACE_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


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
    report.runs = run_workers(home, config, chosen)
    return report
