"""`rw host`: put a project's branch on a git host; `rw instances`: who writes what (docs/deploy.md)."""

from __future__ import annotations

import click

from verifier.cli.app import cli, fail, home_from_env
from verifier.deploy.hosting import attach_remote
from verifier.errors import VerifierError


@cli.command("host")
@click.argument("slug")
@click.argument("url")
def host_cmd(slug: str, url: str) -> None:
    """Put SLUG's branch on an empty repository at URL; every landing is then pushed there.

    Credentials come from git (SSH keys, a credential helper); the URL is kept in config.json.
    """
    home = home_from_env()
    try:
        tip = attach_remote(home, slug, url)
    except VerifierError as exc:
        fail(exc)
    click.echo(f"{slug} is on {url} at {tip}; every landing is now a compare-and-swap push there")


@cli.command("instances")
def instances_cmd() -> None:
    """The live verifier instances of this deployment and the projects each writes.

    Reads the PostgreSQL Commons config.json names; a home with one instance has nothing to show.
    """
    home = home_from_env()
    backends = home.settings.backends
    if backends.commons.kind != "postgres":
        click.echo("one instance: the Commons is this home's SQLite file (docs/deploy.md, several instances)")
        return
    from verifier.commons import leases  # noqa: PLC0415 - psycopg only when used
    from verifier.deploy.instances import database  # noqa: PLC0415

    try:
        db = database(home)
        load = leases.live_load(db, live_s=backends.lease_s)
        for name, (address, held) in sorted(load.items()):
            mine = " (this home)" if name == backends.instance else ""
            projects = ", ".join(leases.held_by(db, name)) or "-"
            click.echo(f"{name}{mine}  {address}  {held} project(s): {projects}")
        if not load:
            click.echo(f"no instance beat in the last {backends.lease_s:g} s")
    except VerifierError as exc:
        fail(exc)
