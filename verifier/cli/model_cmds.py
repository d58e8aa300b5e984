"""`rw model check`: one small request per configured role, and what answered (the platform
worker's `rw worker run --model` is in worker_cmds). Thin: parse, call, render."""

from __future__ import annotations

from datetime import date

import click

from verifier.cli.app import EXIT_REJECTED, cli, emit, home_from_env
from verifier.model.adapter import ModelError, ask, backend_from_config
from verifier.model.roles import ROLES
from verifier.model.schema import ResolveRequest

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
