"""`rw model check` (one small request per configured role, and what answered) and
`rw worker run SLUG LEAF --model ROLE` (the platform worker on one leaf). Thin: parse, call, render."""

from __future__ import annotations

import os
from datetime import date

import click

from verifier.agentkit.modelworker import WorkerSetupError, run_on_home, run_plan
from verifier.cli.app import EXIT_REJECTED, RwError, cli, emit, fail, fetcher_for, home_from_env, now_from_env
from verifier.cli.verdicts import show_verdict
from verifier.errors import VerifierError
from verifier.model.adapter import ModelError, ask, backend_from_config
from verifier.model.roles import ROLES, Role
from verifier.model.schema import ResolveRequest
from verifier.roles.validation import WorkerError

# What `rw model check` asks every role: small, about nothing of any project's, answerable by any model.
CHECK_REQUEST = ResolveRequest(hypothesis_id="H1", revision=1, statement="Water boils at 100 °C at sea level.",
                               criterion="Standard references give 100 °C at 1 atm.",
                               measure="Any standard physics reference.", check_date=date(2026, 1, 1))


@cli.group("model")
def model_group() -> None:
    """The models behind each role (docs/models.md)."""


@model_group.command("check")
@click.option("--json", "as_json", is_flag=True)
def model_check(as_json: bool) -> None:
    """Send one small request per configured role and print which backend and model answered."""
    home = home_from_env()
    rows: list[dict[str, object]] = []
    for role in ROLES:
        config = home.model_config(role)
        if config is None:
            rows.append({"role": role, "configured": None, "ok": None})
            continue
        row: dict[str, object] = {"role": role, "configured": config.describe()}
        try:
            reply = ask(backend_from_config(config, base=home.root), CHECK_REQUEST)
        except ModelError as exc:
            row.update(ok=False, error=str(exc))
        else:
            usage = reply.usage
            row.update(ok=True, backend=reply.backend, model=reply.model, duration_s=round(reply.duration_s, 3),
                       tokens=usage.tokens if usage else None, usd=usage.usd if usage else None)
        rows.append(row)
    lines = []
    for row in rows:
        if row["configured"] is None:
            lines.append(f"{row['role']}: not configured")
        elif row["ok"]:
            cost = "" if row["usd"] is None else f", usd {row['usd']}"
            tokens = "" if row["tokens"] is None else f", {row['tokens']} tokens"
            lines.append(f"{row['role']}: {row['backend']} {row['model']} answered in {row['duration_s']} s"
                         f"{tokens}{cost}")
        else:
            lines.append(f"{row['role']}: FAILED ({row['configured']}): {row['error']}")
    emit(rows, as_json, "\n".join(lines))
    if any(row["ok"] is False for row in rows):
        raise SystemExit(EXIT_REJECTED)


@cli.group("worker")
def worker_group() -> None:
    """Workers the platform runs on a leaf (docs/models.md)."""


@worker_group.command("run")
@click.argument("slug")
@click.argument("leaf_id")
@click.option("--model", "role", type=click.Choice(ROLES), default="worker", show_default=True,
              help="The role whose configured model does the leaf.")
@click.option("--url", "urls", multiple=True, help="A scout leaf's pinned source URL (repeatable; the first is used).")
@click.option("--json", "as_json", is_flag=True)
def worker_run(slug: str, leaf_id: str, role: Role, urls: tuple[str, ...], as_json: bool) -> None:
    """Do LEAF_ID of SLUG with the configured model and submit it as RW_TOKEN's agent."""
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
    """Do every open extract leaf of PLAN_ID with the configured model (the controlled arm's default
    single agent: SLUG and PLAN_ID default to RW_ARM_PROJECT and RW_ARM_PLAN)."""
    home = home_from_env()
    try:
        lines = run_plan(home, slug, plan_id, role=role, token=os.environ.get("RW_TOKEN", ""), now=now_from_env(),
                         fetcher=fetcher_for(home))
    except WorkerSetupError as exc:
        raise RwError(str(exc)) from exc
    except VerifierError as exc:
        fail(exc)
    click.echo("\n".join(lines) or f"no open extract leaf of plan {plan_id} in {slug}")
