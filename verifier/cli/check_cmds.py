"""`rw check`: the verifier's checks run on the working folder you are in, before anything is sent
(verifier.agentkit.localcheck). Its own module: only this command loads the checks."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import click

from verifier.agentkit.localcheck import result_json, run_checks
from verifier.agentkit.safefiles import LinkRefused
from verifier.agentkit.workdir import Work, find_work
from verifier.cli.app import EXIT_REJECTED, RwError, cli, untrusted


def _skill_version(work: Work) -> str:
    """The skill the folder was claimed under; a folder `rw work` made names it, so the skill file
    is read (and its format loaded) only for an older folder."""
    if work.state.skill_version:
        return work.state.skill_version
    from verifier.agentkit.skillref import current_skill_version  # noqa: PLC0415

    return current_skill_version()


@cli.command("check")
@click.option("--json", "as_json", is_flag=True)
def check_cmd(as_json: bool) -> None:
    """Run the leaf kind's checks on the working folder, as the verifier will (same codes)."""
    try:
        work = find_work(Path.cwd())
    except FileNotFoundError as exc:
        raise RwError(str(exc)) from exc
    except LinkRefused as exc:
        raise untrusted(str(exc)) from exc
    try:
        result = run_checks(work, datetime.now(UTC).replace(microsecond=0), _skill_version(work))
    except RuntimeError as exc:
        raise RwError(str(exc)) from exc
    except LinkRefused as exc:
        raise untrusted(str(exc)) from exc
    if as_json:
        click.echo(json.dumps(result_json(result), indent=2, sort_keys=True))
    else:
        # In the verifier's order: the trace is checked before the patch.
        for problem in result.trace_problems:
            click.echo(f"{problem.line()} (trace)")
        for rejection in result.rejections:
            click.echo(rejection.line())
        if result.ok and not result.trace_problems and result.holds:
            click.echo(f"OK {result.summary}; the service will hold it for a person ({', '.join(result.holds)})")
        elif result.ok and not result.trace_problems:
            click.echo(f"OK {result.summary}".rstrip())
        for note in result.notes:
            click.echo(f"  note: {note}")
    if not result.ok or result.trace_problems:  # the verifier would reject either
        raise SystemExit(EXIT_REJECTED)
