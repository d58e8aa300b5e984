"""Commands of the improvement loop (docs/loop.md): the maintainer, the proposer, the live skill, and the
bodies of the steward's trace readers (`rw trace list|show`, declared beside the agent's `rw trace`
in agent_cmds so that one `trace` group serves both)."""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from verifier.agentkit.modelworker import validation_worker
from verifier.cli.app import RwError, cli, emit, fail, home_from_env, now_from_env
from verifier.errors import AuthError, FormatError, NotFound
from verifier.formats.skill import SKILL_KINDS, skill_version
from verifier.model.adapter import ModelError
from verifier.roles.gating import Decision
from verifier.roles.liveskill import read_live_skill
from verifier.roles.maintainer import configured_backend, kinds_due_for_maintenance, run_pass
from verifier.roles.proposals import ProposalRefused
from verifier.roles.proposer import run_proposer
from verifier.roles.skillgate import gate
from verifier.roles.traceindex import Reader, TraceIndex, authorize_reader
from verifier.store.home import Home


def _steward(home: Home) -> Reader:
    """The person RW_TOKEN names and the projects they steward: the only traces they read."""
    try:
        return authorize_reader(home, os.environ.get("RW_TOKEN", ""))
    except AuthError as exc:
        fail(exc)


def list_traces(kind: str | None, outcome: str | None, limit: int, as_json: bool) -> None:
    """`rw trace list`: the newest traced submissions of the caller's projects, newest first (a
    project steward only)."""
    home = home_from_env()
    reader = _steward(home)
    index = TraceIndex(home)
    index.refresh()
    rows = index.listing(kind=kind, outcome=outcome, limit=limit, projects=reader.projects)
    text = "\n".join(f"{e.trace_id}  {e.at}  {e.project}/{e.leaf_id}  {e.kind}  {e.outcome}"
                     f"{'  [' + e.reason_code + ']' if e.reason_code else ''}" for e in rows) or "(no traces)"
    emit([asdict(e) for e in rows], as_json, text)


def show_trace(trace_id: str, name: str | None, as_json: bool) -> None:
    """`rw trace show`: one trace of the caller's projects, the ledger outcomes that cite it and its
    manifest (or one file)."""
    home = home_from_env()
    reader = _steward(home)
    index = TraceIndex(home)
    index.refresh()
    try:
        detail = index.show(trace_id, reader.projects)
    except NotFound as exc:
        fail(exc)
    if name is not None:
        if name not in detail.files:
            raise RwError(f"trace {trace_id} has no {name}")
        click.echo(detail.files[name].decode("utf-8", errors="replace"), nl=False)
        return
    manifest = json.loads(detail.files["manifest.json"])
    events = detail.files.get("events.jsonl", b"").count(b"\n")
    data: dict[str, Any] = {"trace_id": trace_id, "outcomes": [asdict(e) for e in detail.entries],
                            "manifest": manifest, "events": events, "files": sorted(detail.files)}
    lines = [f"trace {trace_id}: {events} events, files {', '.join(sorted(detail.files))}"]
    lines += [f"  {e.project}/{e.leaf_id} ({e.kind}) {e.outcome} at {e.at}"
              f"{': ' + e.description[:200] if e.description else ''}" for e in detail.entries]
    lines.append(json.dumps(manifest, indent=2, sort_keys=True))
    emit(data, as_json, "\n".join(lines))

NO_WORKER = ("no validation worker configured: set `validation_worker` (a command) or a `worker` model "
             "(`models.worker`, or `model`) in $RW_HOME/config.json (docs/loop.md, docs/models.md)")


@cli.group("maintainer")
def maintainer_group() -> None:
    """The Wiki Maintainer: traces -> pattern pages in $RW_HOME/ops-wiki.git."""


@maintainer_group.command("run")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def maintainer_run(as_json: bool) -> None:
    """One pass: sample recent traces by kind and outcome, write pattern pages, index and log."""
    home = home_from_env()
    try:
        report = run_pass(home, now=now_from_env(), backend=configured_backend(home))
    except (FormatError, NotFound) as exc:
        fail(exc)
    data = {"sampled": {f"{k}/{o}": n for (k, o), n in sorted(report.sampled.items())}, "written": report.written,
            "commit": report.commit, "model": report.model, "notes": report.notes}
    text = (f"sampled {sum(report.sampled.values())} traces; wrote {len(report.written)} pattern pages; "
            f"ops wiki commit {report.commit[:12]}" + "".join(f"\nnote: {n}" for n in report.notes))
    emit(data, as_json, text)


@maintainer_group.command("due")
def maintainer_due() -> None:
    """The leaf kinds due for a pass (settings.maintainer_every); prints nothing when none is."""
    for kind in kinds_due_for_maintenance(home_from_env()):
        click.echo(kind)


@cli.group("proposer")
def proposer_group() -> None:
    """The Skill Proposer: one atomic skill proposal, gated on the validation set."""


@proposer_group.command("run")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def proposer_run(as_json: bool) -> None:
    """Ask the model for one proposal and gate it; the live skill changes only if it is kept."""
    home = home_from_env()
    backend = configured_backend(home, "propose")
    if backend is None:
        raise RwError("no model configured: set `model` (or `models.propose`) in $RW_HOME/config.json "
                      "(docs/models.md)")
    worker = validation_worker(home)
    if worker is None:
        raise RwError(NO_WORKER)
    try:
        decision = run_proposer(home, backend=backend, worker=worker, now=now_from_env())
    except (ModelError, ProposalRefused) as exc:
        raise RwError(str(exc)) from exc
    except (FormatError, NotFound) as exc:
        fail(exc)
    _print_decision(decision, as_json)

def _print_decision(decision: Decision, as_json: bool) -> None:
    value = decision.candidate.value if decision.candidate else None
    data = {"proposal": decision.proposal_id, "kind": decision.kind, "outcome": decision.outcome, "score": value,
            "best": decision.best, "validation_set": decision.set_version, "skill_version": decision.skill_version,
            "reason": decision.reason}
    text = (f"{decision.proposal_id} ({decision.kind}): {decision.outcome}; score {value} against best "
            f"{decision.best} on validation set {decision.set_version}; skill_version {decision.skill_version}")
    emit(data, as_json, text + (f"\n{decision.reason}" if decision.reason else ""))


@cli.group("loop")
def loop_group() -> None:
    """The live skill and the gate, by hand."""


@loop_group.command("skill")
@click.option("--version", "version_only", is_flag=True, help="Print only the skill_version.")
def loop_skill(version_only: bool) -> None:
    """The live skill workers read now ($RW_HOME/skill/SKILL.md, seeded from skill/SKILL.md)."""
    home = home_from_env()
    data = read_live_skill(home)
    click.echo(skill_version(data) if version_only else data.decode("utf-8"), nl=version_only)


@loop_group.command("gate")
@click.option("--kind", type=click.Choice(SKILL_KINDS), required=True, help="The one section the candidate changes.")
@click.option("--candidate", type=click.Path(exists=True, dir_okay=False, path_type=Path), required=True,
              help="The whole candidate skill file.")
@click.option("--reason", default="", help="Why (recorded in skill-impact.md).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def loop_gate(kind: str, candidate: Path, reason: str, as_json: bool) -> None:
    """Gate a hand-written candidate skill exactly as a proposal is gated (validation worker required)."""
    home = home_from_env()
    worker = validation_worker(home)
    if worker is None:
        raise RwError(NO_WORKER)
    try:
        decision = gate(home, kind, candidate.read_text(encoding="utf-8"), rationale=reason, now=now_from_env(),
                        worker=worker)
    except (FormatError, NotFound) as exc:
        fail(exc)
    _print_decision(decision, as_json)
