"""`rw`: the verifier's command line; wires the command modules onto the group and runs it."""

from __future__ import annotations

import sys

import click

from verifier.cli import (
    graph_cmds,
    graph_meaning_cmds,
    loop_cmds,
    planner_cmds,
    project_cmds,
    resolver_cmds,
    runner_cmds,
    service_cmds,
    submit_cmds,
    ui_cmds,
    writer_cmds,
)
from verifier.cli.app import EXIT_CRASH, EXIT_USAGE, cli, exit_code_of

COMMAND_MODULES = (project_cmds, submit_cmds, graph_cmds, service_cmds, resolver_cmds, writer_cmds, loop_cmds,
                   planner_cmds, runner_cmds, ui_cmds, graph_meaning_cmds)


def main() -> None:
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted!", err=True)
        sys.exit(EXIT_USAGE)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except Exception as exc:  # the one map from errors to exit codes (see verifier.cli.app)
        code = exit_code_of(exc)
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        prefix = "the verifier crashed: " if code == EXIT_CRASH else ""
        click.echo(f"Error: {prefix}{text}", err=True)
        sys.exit(code)
