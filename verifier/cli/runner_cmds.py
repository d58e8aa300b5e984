"""`rw runner`: wake every project's Planner on its cadence and run worker agents (docs/planner.md)."""

from __future__ import annotations

import os
import time

import click

from verifier.cli.app import RwError, cli, emit, fail, home_from_env, now_from_env
from verifier.errors import AuthError
from verifier.formats.duration import parse_duration
from verifier.roles.agentworker import rw_executable
from verifier.roles.planner import local_commons
from verifier.roles.runner import WorkerConfig, agent_worker, tick

TOKEN_ENV = "RW_WORKER_TOKEN"  # noqa: S105 - the name of a variable, not a token


def _seconds(text: str, option: str) -> float:
    return parse_duration(text, option, positive=True).total_seconds()


def _worker_config(kind: str | None, command: str | None, workers: int, limit_text: str,
                   server: str | None) -> WorkerConfig | None:
    if kind is None and command is None:
        return None
    kind = kind or "command"
    if (kind == "command") != (command is not None):
        raise RwError("--worker command goes with --worker-command; --worker claude|codex runs without one")
    token = os.environ.get(TOKEN_ENV, "")
    if not token:
        raise RwError(f"the workers need the worker agent's token in ${TOKEN_ENV}")
    limit_s = _seconds(limit_text, "--limit")
    if kind == "command":
        assert command is not None
        return WorkerConfig(command, token, workers, limit_s, server)
    if not server:
        raise RwError(f"--worker {kind} needs --server URL: the agent works in a clone it takes from the service")
    return agent_worker(kind, token, server, workers, limit_s, rw=rw_executable())


@cli.command("runner")
@click.option("--project", "projects", multiple=True, help="Only these projects (repeatable; default: all).")
@click.option("--once", is_flag=True, help="One pass, then exit (for a systemd timer or cron).")
@click.option("--every", default="1m", show_default=True, help="Pause between passes when looping.")
@click.option("--worker", "worker_kind", type=click.Choice(["claude", "codex", "command"]),
              help="Who does each claimed leaf: a real agent CLI headless (claude, codex; needs --server), or "
                   "--worker-command (command, the default when --worker-command is given).")
@click.option("--worker-command", help="Run this per claimed leaf (RW_LEAF, RW_PROJECT, RW_SERVER, RW_TOKEN set). "
                                       f"The worker agent's token comes from ${TOKEN_ENV}.")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(0, 64), help="Workers at once.")
@click.option("--limit", "limit_text", default="15m", show_default=True, help="Wall-clock limit per worker.")
@click.option("--server", help="The service URL the workers submit to (claims go through it too).")
@click.option("--json", "as_json", is_flag=True)
def runner_cmd(projects: tuple[str, ...], once: bool, every: str, worker_kind: str | None,
               worker_command: str | None, workers: int, limit_text: str, server: str | None,
               as_json: bool) -> None:
    """Wake each project's Planner when its loop_cadence is due; optionally run worker agents."""
    home = home_from_env()
    commons = local_commons(home)
    config = _worker_config(worker_kind, worker_command, workers, limit_text, server)
    pause = _seconds(every, "--every")
    while True:
        slugs = list(projects) or home.projects()
        try:
            report = tick(home, slugs, now_from_env(), commons, config)
        except AuthError as exc:
            fail(exc)
        runs = [{"project": r.slug, "leaf_id": r.leaf_id, "exit_code": r.exit_code, "seconds": round(r.seconds, 1),
                 "log": str(r.log), "crash_seq": r.crash_seq} for r in report.runs]
        lines = [f"{slug}: {what}" for slug, what in report.woke.items()]
        lines += [report.maintenance] if report.maintenance else []
        lines += [f"{r['project']}/{r['leaf_id']}: " + ("stopped at the limit" if r["exit_code"] is None
                                                        else f"exit {r['exit_code']}") + f" ({r['log']})"
                  + (f"; crash row #{r['crash_seq']}" if r["crash_seq"] is not None else "")
                  for r in runs]
        data = {"woke": report.woke, "runs": runs, "maintenance": report.maintenance}
        emit(data, as_json, "\n".join(lines) or "no projects")
        if once:
            return
        time.sleep(pause)
