"""`rw mcp`: the agent's loop as an MCP server on stdio (verifier.mcp.server; docs/mcp.md)."""

from __future__ import annotations

from pathlib import Path

import click

from verifier.cli.app import RwError, cli
from verifier.cli.remote import server_option
from verifier.client.http import check_server_url
from verifier.errors import FormatError


@cli.command("mcp")
@server_option
@click.option("--dir", "root", type=click.Path(file_okay=False, path_type=Path), default=Path(),
              show_default=True, help="Where the working folders are made, one per leaf (LEAF_ID/).")
def mcp_cmd(server: str, root: Path) -> None:
    """Serve the agent's loop as MCP tools on stdin/stdout (the token comes from RW_TOKEN)."""
    try:
        check_server_url(server)
    except FormatError as exc:
        raise RwError(str(exc)) from exc
    root.mkdir(parents=True, exist_ok=True)
    # Imported here: the SDK is needed by this command alone.
    from verifier.mcp.server import serve_stdio  # noqa: PLC0415

    serve_stdio(server, root)
