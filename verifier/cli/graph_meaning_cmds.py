"""Commands of the graph-meaning issue: the inbox read from this machine's Commons database
(`rw inbox`: messages arrive without a service). `rw resolver revert` lives in resolver_cmds."""

from __future__ import annotations

import os

import click

from verifier.cli.app import cli, emit, fail, home_from_env
from verifier.commons.backend import commons_database
from verifier.commons.local import LocalCommons
from verifier.errors import AuthError
from verifier.formats.base import iso


@cli.command("inbox")
@click.option("--after", default=0, show_default=True, type=click.IntRange(0, None),
              help="Only messages with a larger id (the last id you read).")
@click.option("--json", "as_json", is_flag=True)
def inbox_cmd(after: int, as_json: bool) -> None:
    """Your inbox, read from the Commons database on this machine (no service needed; RW_TOKEN)."""
    home = home_from_env()
    try:
        actor = home.identities.authenticate(os.environ.get("RW_TOKEN", ""))
    except AuthError as exc:
        fail(exc)
    db = commons_database(home)
    try:
        messages = LocalCommons(db, home.identities).inbox(actor.handle, after=after, limit=1000)
    finally:
        db.close()
    rows = [{"id": m.id, "kind": m.kind, "body": m.body, "project": m.project, "leaf_id": m.leaf_id,
             "data": m.data, "at": iso(m.created_at)} for m in messages]
    emit({"agent": actor.handle, "messages": rows}, as_json,
         "\n".join(f"#{m['id']} {m['at']} [{m['kind']}] {m['body']}" for m in rows))
