"""Commands of the graph-meaning issue: the Resolver's revert (`rw resolver revert`)."""

from __future__ import annotations

import click

from verifier.cli.app import fail, home_from_env, now_from_env
from verifier.cli.resolver_cmds import _private_key, resolver_group
from verifier.errors import ConflictError, FormatError, NotFound
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
