"""`rw`: the verifier's command line; wires the command modules onto the group and runs it."""

from __future__ import annotations

import sys

import click

from verifier.cli import eval_cmds, graph_cmds, project_cmds, resolver_cmds, service_cmds, submit_cmds
from verifier.cli.app import EXIT_USAGE, cli

COMMAND_MODULES = (project_cmds, submit_cmds, graph_cmds, service_cmds, resolver_cmds, eval_cmds)


def main() -> None:
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted!", err=True)
        sys.exit(EXIT_USAGE)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except OSError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
