"""The one way `rw` shows a verdict, in-process or from a service: the one-line `ACCEPTED ...` /
`REJECTED ...: [code] where: why` (then `  also ...` for every further rejection, and the check's
notes on stderr), or with --json the whole verdict; and the one exit code of its outcome
(`verifier.cli.app.exit_code_of_outcome`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import click

from verifier.cli.app import exit_code_of_outcome
from verifier.pipeline.verdict import Verdict


def show_verdict(verdict: Mapping[str, Any], as_json: bool, submission_id: str | None = None) -> int:
    """Print a verdict (`Verdict.to_json`, as the service answers it); its exit code.

    The JSON form is the verdict as received, with the service's `submission_id` when there is one."""
    if as_json:
        shown = verdict if submission_id is None else {**verdict, "submission_id": submission_id}
        click.echo(json.dumps(shown, indent=2, sort_keys=True))
    else:
        shown_verdict = Verdict.from_json(verdict)
        for line in shown_verdict.lines():
            click.echo(line)
        for note in shown_verdict.notes:  # what the check wants said beside its verdict
            click.echo(f"note: {note}", err=True)
    return exit_code_of_outcome(str(verdict.get("outcome")))
