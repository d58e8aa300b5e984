"""`rw host`: put a project's branch on a git host (docs/deploy.md)."""

from __future__ import annotations

import click

from verifier.cli.app import cli, fail, home_from_env
from verifier.errors import VerifierError
from verifier.pipeline.hosting import attach_remote


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
