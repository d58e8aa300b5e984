"""Commands of the Planner: `rw planner wake SLUG` (one wake) and `rw planner show SLUG`."""

from __future__ import annotations

import click

from verifier.cli.app import cli, emit, fail, home_from_env
from verifier.cli.resolver_cmds import _moment
from verifier.errors import ConflictError, FormatError, LedgerIntegrityError, NotFound
from verifier.roles.planner import local_commons, wake


@cli.group("planner")
def planner_group() -> None:
    """The Planner: turns a project's state into a plan and leaves (docs/planner.md)."""


@planner_group.command("wake")
@click.argument("slug")
@click.option("--now", "now_text", help="The reference date or time (default: RW_NOW or the clock).")
@click.option("--force", is_flag=True, help="Wake even if loop_cadence has not passed since the last wake.")
@click.option("--warm-only", is_flag=True, help="Only top up the warm-leaf pool.")
@click.option("--json", "as_json", is_flag=True)
def wake_cmd(slug: str, now_text: str | None, force: bool, warm_only: bool, as_json: bool) -> None:
    """Wake SLUG's Planner once: land a plan and its leaves, post them as Commons tasks."""
    home = home_from_env()
    now = _moment(now_text)
    try:
        result = wake(home, slug, now, commons=local_commons(home), force=force, warm_only=warm_only)
    except (NotFound, FormatError, ConflictError, LedgerIntegrityError) as exc:
        fail(exc)
    value = result.to_json()
    if result.skipped:
        text = f"{slug}: {result.skipped}"
    elif result.landed is None:
        text = f"{slug}: nothing new to plan ({len(value['refused'])} candidates overlap open leaves)"  # type: ignore[arg-type]
    else:
        plan_ = result.plan
        assert plan_ is not None
        lines = [f"{slug}: plan {plan_.plan_id}{' (held)' if plan_.held else ''}, {len(plan_.leaves)} leaves, "
                 f"{len(plan_.questions)} questions, ledger #{result.landed.row.seq}"]
        lines += [f"  {c.leaf_id}  {c.kind}{' warm' if c.warm else ''}  {c.title}" for c in plan_.leaves]
        text = "\n".join(lines)
    emit(value, as_json, text)
