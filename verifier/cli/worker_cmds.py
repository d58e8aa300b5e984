"""`rw worker run SLUG LEAF --agent claude|codex`: one leaf done by a real agent CLI on this machine
(verifier.roles.agentworker; docs/runners.md); `rw worker run SLUG LEAF --model ROLE` and
`rw worker plan`: the platform's own model worker (verifier.agentkit.modelworker; docs/models.md);
and `rw skill install`: the live skill, fetched from the service, put where an agent CLI reads it."""

from __future__ import annotations

import os
import time
from pathlib import Path

import click

from verifier.agentkit import served
from verifier.agentkit.agentcli import AGENTS, DEFAULT_MAX_TURNS, SKILL_NAME
from verifier.agentkit.modelworker import WorkerSetupError, run_on_home, run_plan
from verifier.cli.app import EXIT_AUTH, RwError, cli, emit, fail, fetcher_for, home_from_env, now_from_env, untrusted
from verifier.cli.remote import call, client_for, ok, server_option
from verifier.cli.verdicts import show_verdict
from verifier.errors import FormatError, VerifierError
from verifier.formats.duration import parse_duration
from verifier.model.roles import ROLES, Role
from verifier.roles.agentworker import AgentWorkerConfig, run_agent_leaf
from verifier.roles.validation import WorkerError

TOKEN_ENVS = ("RW_TOKEN", "RW_WORKER_TOKEN")


@cli.group("worker")
def worker_group() -> None:
    """Run a worker on one leaf: a real agent CLI (--agent) or the platform's model worker (--model)."""


@worker_group.command("run")
@click.argument("slug")
@click.argument("leaf_id")
@click.option("--agent", "agent", type=click.Choice(AGENTS), default=None,
              help="An agent CLI to run headless (docs/runners.md); needs --server.")
@click.option("--model", "role", type=click.Choice(ROLES), default=None,
              help="The role whose configured model does the leaf (docs/models.md; the default, as `worker`).")
@click.option("--server", envvar="RW_SERVER", show_envvar=True, default=None, metavar="URL",
              help="The verifier service an agent CLI works against (--agent).")
@click.option("--limit", "limit_text", default="15m", show_default=True,
              help="Wall-clock limit of the agent CLI (then SIGTERM to its group, SIGKILL 5s later).")
@click.option("--max-turns", default=DEFAULT_MAX_TURNS, show_default=True, type=click.IntRange(1, 1000),
              help="The agent's turn budget (claude; codex has none but the limit).")
@click.option("--level", type=click.Choice(sorted(served.LEVEL_RANK)), default=None,
              help="Trace level (default: what the leaf asks for, else L2).")
@click.option("--dir", "folder", type=click.Path(file_okay=False, path_type=Path),
              help="The agent's working folder to make (default: under $RW_HOME/runs/SLUG/).")
@click.option("--url", "urls", multiple=True,
              help="A scout leaf's pinned source URL for the model worker (repeatable; the first is used).")
@click.option("--json", "as_json", is_flag=True)
def worker_run(slug: str, leaf_id: str, agent: str | None, role: Role | None, server: str | None, limit_text: str,
               max_turns: int, level: str | None, folder: Path | None, urls: tuple[str, ...], as_json: bool) -> None:
    """Do LEAF_ID of SLUG and submit it as RW_TOKEN's agent.

    With --agent: rw work, the live skill installed, the CLI headless, its transcript imported,
    rw check, rw submit; a crash is a `crash` ledger row and the leaf goes back. Otherwise the
    platform worker does it with the model configured for --model's role (default `worker`)."""
    if agent is not None and role is not None:
        raise RwError("give --agent (an agent CLI) or --model (a configured model), not both")
    if agent is None:
        _model_run(slug, leaf_id, role or "worker", urls, as_json)
        return
    if not server:
        raise RwError("--agent needs the service: give --server URL or set RW_SERVER")
    token = next((os.environ[name] for name in TOKEN_ENVS if os.environ.get(name)), "")
    if not token:
        raise RwError(f"no token: set RW_TOKEN (or {TOKEN_ENVS[1]}) to the worker agent's token", EXIT_AUTH)
    try:
        served.leaf_id(leaf_id, "LEAF_ID")
    except served.Untrusted as exc:
        raise RwError(str(exc)) from exc
    try:
        limit_s = parse_duration(limit_text, "--limit", positive=True).total_seconds()
    except FormatError as exc:
        raise RwError(str(exc)) from exc
    home = home_from_env()
    target = folder or home.layout.runs(slug) / f"{leaf_id}-{time.strftime('%Y%m%dT%H%M%S')}-{agent}"
    config = AgentWorkerConfig(agent, server, token, limit_s, max_turns, level)  # type: ignore[arg-type]
    try:
        run = run_agent_leaf(home, config, slug, leaf_id, target.resolve())
    except VerifierError as exc:
        fail(exc)
    data = {"project": run.slug, "leaf_id": run.leaf_id, "agent": run.agent, "outcome": run.outcome,
            "reason": run.reason, "ledger_seq": run.ledger_seq, "seconds": round(run.seconds, 1),
            "skill_version": run.skill_version, "folder": str(run.folder)}
    seq = f" (ledger #{run.ledger_seq})" if run.ledger_seq is not None else ""
    emit(data, as_json, f"{slug}/{leaf_id}: {agent} {run.outcome}{seq}" + (f": {run.reason}" if run.reason else "")
         + f"\nworking folder {run.folder}")
    if run.outcome not in ("accepted", "held"):
        raise SystemExit(1)


def _model_run(slug: str, leaf_id: str, role: Role, urls: tuple[str, ...], as_json: bool) -> None:
    home = home_from_env()
    token = os.environ.get("RW_TOKEN", "")
    try:
        verdict = run_on_home(home, slug, leaf_id, role=role, token=token, urls=list(urls), now=now_from_env(),
                              fetcher=fetcher_for(home))
    except (WorkerSetupError, WorkerError) as exc:
        raise RwError(str(exc)) from exc
    except VerifierError as exc:  # a bad token, no such project, a broken history: each with its own code
        fail(exc)
    raise SystemExit(show_verdict(verdict.to_json(), as_json))


@worker_group.command("plan")
@click.argument("slug", envvar="RW_ARM_PROJECT")
@click.argument("plan_id", envvar="RW_ARM_PLAN")
@click.option("--model", "role", type=click.Choice(ROLES), default="worker", show_default=True,
              help="The role whose configured model does the leaves.")
def worker_plan(slug: str, plan_id: str, role: Role) -> None:
    """Do every open extract leaf, then link leaf, of PLAN_ID with the configured model (the
    controlled arm's default single agent: SLUG and PLAN_ID default to RW_ARM_PROJECT and RW_ARM_PLAN)."""
    home = home_from_env()
    try:
        lines = run_plan(home, slug, plan_id, role=role, token=os.environ.get("RW_TOKEN", ""), now=now_from_env(),
                         fetcher=fetcher_for(home))
    except WorkerSetupError as exc:
        raise RwError(str(exc)) from exc
    except VerifierError as exc:
        fail(exc)
    click.echo("\n".join(lines) or f"no open extract leaf of plan {plan_id} in {slug}")


@cli.group("skill")
def skill_group() -> None:
    """The live skill the service serves (GET /skill)."""


@skill_group.command("install")
@server_option
@click.option("--for", "target", default="claude", show_default=True, metavar="claude|codex|DIR",
              help="claude: ./.claude/skills/researchwiki/SKILL.md; codex: ./AGENTS.md; a folder: DIR/SKILL.md.")
def skill_install(server: str, target: str) -> None:
    """Fetch the live skill and write it where an agent CLI reads it; prints its skill_version."""
    reply = ok(call(lambda: client_for(server, token_required=False).get("/skill", auth=False)))
    try:
        data, version = served.live_skill(reply.body)
    except served.Untrusted as exc:
        raise untrusted(f"refusing what the server sent: {exc}") from exc
    path = {"claude": Path(".claude") / "skills" / SKILL_NAME / "SKILL.md", "codex": Path("AGENTS.md")}.get(
        target, Path(target) / "SKILL.md")
    if any(part.is_symlink() for part in (path, *path.parents)):
        raise untrusted(f"{path} goes through a link; rw skill install writes only plain files")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    click.echo(f"{version} {path}")
