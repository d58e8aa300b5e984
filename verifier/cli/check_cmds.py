"""`rw check`: the verifier's checks run on the working folder you are in, before anything is sent
(verifier.agentkit.localcheck). Its own module: only this command loads the checks. What it does
and says is verifier.cli.checking's, which `rw check` as typed also runs without click (cli.main)."""

from __future__ import annotations

import click

from verifier.cli.app import RwError, cli, untrusted
from verifier.cli.checking import FolderError, check_here


def click_error(exc: FolderError) -> RwError:
    """A folder that cannot be checked, as the command says it (a refused tree with the code of
    an untrusted reply)."""
    return untrusted(exc.message) if exc.untrusted else RwError(exc.message)


@cli.command("check")
@click.option("--json", "as_json", is_flag=True)
def check_cmd(as_json: bool) -> None:
    """Run the leaf kind's checks on the working folder, as the verifier will (same codes)."""
    try:
        said = check_here(as_json)
    except FolderError as exc:
        raise click_error(exc) from exc
    for line in said.lines:
        click.echo(line)
    if said.exit_code:
        raise SystemExit(said.exit_code)
