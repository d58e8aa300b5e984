"""`rw ui build SLUG --out DIR`: the UI's pages of one project written as a static site (the same
templates `rw serve` renders under `/`), for any static host."""

from __future__ import annotations

from pathlib import Path

import click

from verifier.cli.app import cli, fail, home_from_env, now_from_env
from verifier.errors import FormatError, NotFound
from verifier.ui.site import build_site, write_site


@cli.group("ui")
def ui_group() -> None:
    """The read-only UI: hypothesis cards, findings, the ledger, the hold queues (docs/ui.md)."""


@ui_group.command("build")
@click.argument("slug")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The folder to write the site into (made if missing).")
def ui_build(slug: str, out: Path) -> None:
    """Write every page of the project, with its JSON, as a static site."""
    home = home_from_env()
    try:
        files = build_site(home, slug, now_from_env())
        count = write_site(files, out)
    except (NotFound, FormatError) as exc:
        fail(exc)
    click.echo(f"wrote {count} files to {out} (open {out / 'index.html'})")
