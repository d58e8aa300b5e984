"""Commands of the graph-meaning issue: the Resolver's revert (`rw resolver revert`), and the
inbox read from this machine's Commons database (`rw inbox`: messages arrive without a service)."""

from __future__ import annotations

import os

import click

from verifier.cli.app import cli, emit, fail, home_from_env, now_from_env
from verifier.cli.resolver_cmds import _private_key, resolver_group
from verifier.commons.backend import commons_database
from verifier.commons.local import LocalCommons
from verifier.errors import AuthError, ConflictError, FormatError, NotFound
from verifier.formats.base import iso
from verifier.pipeline.revert import resolver_revert


@resolver_group.command("revert")
@click.argument("slug")
@click.argument("commit")
@click.option("--reason", required=True, help="Why, and at whose request: kept in the commit and the ledger.")
def resolver_revert_cmd(slug: str, commit: str, reason: str) -> None:
    """The Resolver reverts a contribution on request (run as the Resolver's user)."""
    home = home_from_env()
    _private_key(home)  # only the Resolver's user can read it: the proof that this is the Resolver
    try:
        landed = resolver_revert(home, slug, commit, reason=reason, now=now_from_env())
    except (NotFound, ConflictError, FormatError) as exc:
        fail(exc)
    click.echo(f"reverted {commit} as the resolver (revert commit {landed.commit}, ledger #{landed.row.seq})")
    if "; withdrew " in landed.row.description:
        click.echo("withdrew " + landed.row.description.rsplit("; withdrew ", 1)[1])


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
