"""`rw repair`: the documented way out for a project whose history someone else wrote."""

from __future__ import annotations

import click

from verifier.cli.app import actor_from_env, cli, home_from_env, now_from_env
from verifier.cli.remote import project_url, remote_option, remote_post
from verifier.writes.repair import repair


@cli.command("repair")
@click.argument("slug")
@click.option("--to", "to", required=True, metavar="COMMIT",
              help="A ledger commit of the verifier to put the branch back on (often the anchor's commit).")
@click.option("--reason", required=True, help="Why: kept in the ledger row.")
@remote_option
def repair_cmd(slug: str, to: str, reason: str, server: str | None) -> None:
    """Put SLUG's branch back on a commit the ledger vouches for, as a ledger row (token: a person's).

    `rw ledger SLUG --verify` names what was written outside the verifier and the last tip it wrote.
    The steward, a maintainer or an admin repairs (docs/authority.md).
    """
    if server is not None:
        done = remote_post(server, project_url(slug, "repair"), {"to": to, "reason": reason})
        click.echo(f"repaired {slug}: branch on {done['tip']} (ledger #{done['ledger_seq']}); "
                   "writes are accepted again")
        return
    home = home_from_env()
    actor = actor_from_env(home, "repair", slug)
    landed = repair(home, slug, actor, to, reason=reason, now=now_from_env())
    click.echo(f"repaired {slug}: branch on {landed.tip} (ledger #{landed.row.seq}); writes are accepted again")
