"""Commands of the Planner: `rw planner wake SLUG` (one wake) and `rw import SLUG FILE` (hypotheses from a list)."""

from __future__ import annotations

import os
import shutil
import tempfile
from datetime import datetime
from pathlib import Path

import click

from verifier.agentkit.workspace import clone, make_patch, write_files
from verifier.cli.app import cli, emit, fail, home_from_env, now_from_env, now_or, person_or_owner
from verifier.cli.remote import project_url, remote_option, remote_post
from verifier.cli.verdicts import show_verdict
from verifier.errors import AuthError, ConflictError, FormatError, LedgerIntegrityError, NotFound
from verifier.formats.project import parse_project
from verifier.model.roles import role_backend
from verifier.pipeline.submit import Submission, Verdict, submit
from verifier.roles.importing import Imported, hypothesis_file, next_ids, parse_import, with_hypotheses
from verifier.roles.planner import local_commons, wake
from verifier.state.layout import PROJECT_FILE, hypothesis_path
from verifier.store.fetcher import OfflineFetcher
from verifier.store.home import Home
from verifier.writes.project import TEMPLATE, init_project


@cli.group("planner")
def planner_group() -> None:
    """The Planner: turns a project's state into a plan and leaves (docs/planner.md)."""


@planner_group.command("wake")
@click.argument("slug")
@click.option("--now", "now_text", help="The reference date or time (default: RW_NOW or the clock).")
@click.option("--force", is_flag=True, help="Wake even if loop_cadence has not passed since the last wake.")
@click.option("--warm-only", is_flag=True, help="Only top up the warm-leaf pool.")
@click.option("--json", "as_json", is_flag=True)
@remote_option
def wake_cmd(slug: str, now_text: str | None, force: bool, warm_only: bool, as_json: bool, server: str | None) -> None:
    """Wake SLUG's Planner once: land a plan and its leaves, post them as Commons tasks. With
    RW_TOKEN (always with --server): as that person (steward, maintainer or admin)."""
    if server is not None:
        done = remote_post(server, project_url(slug, "planner", "wake"), {"force": force, "warm_only": warm_only})
        emit(done, as_json, f"{slug}: {done.get('skipped') or 'woke'} (plan {done.get('plan_id') or '-'})")
        return
    home = home_from_env()
    now = now_or(now_text)
    person = person_or_owner(home)
    try:
        model = role_backend(home, "plan")
        result = wake(home, slug, now, commons=local_commons(home), force=force, warm_only=warm_only, model=model,
                      person=person)
    except (NotFound, FormatError, ConflictError, LedgerIntegrityError) as exc:
        fail(exc)
    value = result.to_json()
    if result.skipped:
        text = f"{slug}: {result.skipped}"
    elif result.landed is None:
        text = f"{slug}: nothing new to plan ({len(value['refused'])} candidates overlap open leaves)"  # type: ignore[arg-type]
        spent = [d for d in (result.plan.decisions if result.plan else []) if d.startswith("Budget: ")]
        text = f"{slug}: nothing planned. {spent[0]}" if spent else text
    else:
        plan_ = result.plan
        assert plan_ is not None
        lines = [f"{slug}: plan {plan_.plan_id}{' (held)' if plan_.held else ''}, {len(plan_.leaves)} leaves, "
                 f"{len(plan_.questions)} questions, ledger #{result.landed.row.seq}"]
        lines += [f"  {c.leaf_id}  {c.kind}{' warm' if c.warm else ''}  {c.title}" for c in plan_.leaves]
        if value["activated"]:
            lines.append(f"  activated {', '.join(value['activated'])} (the plan targets them)")  # type: ignore[arg-type]
        text = "\n".join(lines)
    if result.sealed:
        click.echo(f"sealed baseline for {', '.join(result.sealed)}", err=True)
    if result.seal_note:
        click.echo(f"note: {result.seal_note}", err=True)
    emit(value, as_json, text)


@cli.command("import")
@click.argument("slug")
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def import_cmd(slug: str, source: Path) -> None:
    """Add loose hypotheses to SLUG from a list (one statement a line), a YAML or a CSV file.

    A new SLUG is created from the built-in template with them; an existing project gets them as
    a person's edit through the verifier (RW_TOKEN of a person). docs/planner.md has the formats."""
    home = home_from_env()
    now = now_from_env()
    try:
        items = parse_import(source.read_bytes(), source.name)
        if slug not in home.projects():
            _create_with(home, slug, items, now)
            click.echo(f"created project {slug} with {len(items)} imported hypotheses")
            return
        verdict = _import_as_edit(home, slug, items, now)
    except (AuthError, NotFound, FormatError, ConflictError) as exc:
        fail(exc)
    raise SystemExit(show_verdict(verdict.to_json(), as_json=False))


def _files_for(project_md: bytes, existing: list[str], items: list[Imported]) -> dict[str, bytes]:
    ids = next_ids(existing, len(items))
    files = {hypothesis_path(h): hypothesis_file(h, item) for h, item in zip(ids, items, strict=True)}
    files[PROJECT_FILE] = with_hypotheses(project_md, [*existing, *ids])
    return files


def _create_with(home: Home, slug: str, items: list[Imported], now: datetime) -> None:
    with tempfile.TemporaryDirectory(prefix="rw-import-") as scratch:
        folder = Path(scratch) / "template"
        shutil.copytree(TEMPLATE, folder)
        files = _files_for((folder / PROJECT_FILE).read_bytes(), [], items)
        for relative, data in files.items():
            (folder / relative).parent.mkdir(parents=True, exist_ok=True)
            (folder / relative).write_bytes(data)
        init_project(home, slug, now=now, template=folder)


def _import_as_edit(home: Home, slug: str, items: list[Imported], now: datetime) -> Verdict:
    repo = home.project(slug)
    tip = repo.tip()
    view = repo.view(tip)
    project, _ = parse_project(view.read(PROJECT_FILE) or b"", PROJECT_FILE)
    files = _files_for(view.read(PROJECT_FILE) or b"", project.hypotheses, items)
    with tempfile.TemporaryDirectory(prefix="rw-import-") as scratch:
        checkout = clone(repo.path, Path(scratch) / "clone", revision=tip)
        write_files(checkout, files)
        patch = make_patch(checkout)
    token = os.environ.get("RW_TOKEN", "")
    return submit(home, Submission(slug, None, patch, {}, token), now=now, fetcher=OfflineFetcher())
