"""Commands for setting up and reading projects: init, agent, leaf, schema, source, ledger."""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import datetime
from pathlib import Path

import click
from pydantic import BaseModel

from verifier.audits.audit import verify_ledger
from verifier.cli.app import EXIT_REJECTED, RwError, actor_from_env, cli, emit, fail, home_from_env, now_from_env
from verifier.cli.remote import (
    project_url,
    remote_get,
    remote_leaf_add,
    remote_option,
    remote_payload,
    remote_source_text,
)
from verifier.commons.adapter import Claim
from verifier.constants import TOKEN_TTL
from verifier.errors import AuthError, ConflictError, FormatError, NotFound
from verifier.formats.base import iso
from verifier.formats.duration import parse_duration
from verifier.formats.entries import (
    HoldEntry,
    InitEntry,
    LeafEntry,
    RepairEntry,
    ResolveEntry,
    RevertEntry,
    SubmitEntry,
)
from verifier.formats.leaf import LEAF_KINDS
from verifier.formats.schema import MODELS, schema_of
from verifier.formats.source import EXTENSION_BY_MEDIA_TYPE, parse_source
from verifier.pipeline.ledger import read_chain
from verifier.pipeline.payload import leaf_payload
from verifier.roles.records import ResolutionRecord
from verifier.seal.sealing import SealedBaseline
from verifier.state.layout import source_bytes_path, source_record_path
from verifier.state.project import ProjectView
from verifier.store.home import Home, Settings
from verifier.store.identities import SCOPES, Actor, Grant, Scope
from verifier.text.visible import shown
from verifier.ui.board import leaf_state
from verifier.writes.baseline import SealRecord
from verifier.writes.followups import seal_after_landing
from verifier.writes.project import LeafRequest, init_project, person_leaf


@cli.command("init")
@click.argument("slug")
@click.option("--from", "template", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A project folder to start from (default: the built-in template).")
@click.option("--no-wake", is_flag=True, help="Skip the Planner's first wake (the board then stays empty).")
@click.option("--steward", metavar="HANDLE", help="Name the project's first steward in PROJECT.md (docs/authority.md).")
def init_cmd(slug: str, template: Path | None, no_wake: bool, steward: str | None) -> None:
    """Create project SLUG (a bare repository under RW_HOME/projects), then wake its Planner once.

    The first wake fills the board, warm leaves first (sources marked `warm: true`), so an agent's
    `rw work SLUG --warm` works at once."""
    home = home_from_env()
    now = now_from_env()
    try:
        landed = init_project(home, slug, now=now, template=template, first_steward=steward)
    except (FormatError, ConflictError) as exc:
        fail(exc)
    click.echo(f"created project {slug} at {home.repo_path(slug)} (tip {landed.tip[:12]})")
    # A template may hold active hypotheses: their baselines are sealed now, or why not is recorded.
    _report_seal(*seal_after_landing(home, slug, now=now_from_env()))
    if not no_wake:
        click.echo(first_wake(home, slug, now))



def _report_seal(sealed: list[str], note: str | None) -> None:
    if sealed:
        click.echo(f"sealed baseline for {', '.join(sealed)}", err=True)
    if note:
        click.echo(f"note: {note}", err=True)


def first_wake(home: Home, slug: str, now: datetime) -> str:
    """The Planner's first wake of a new project, said in one line (what it offered, warm leaves counted)."""
    # The Planner is loaded only here: the other commands of this module start without it.
    from verifier.model.roles import role_backend  # noqa: PLC0415
    from verifier.roles.planner import local_commons, wake  # noqa: PLC0415

    try:
        model = role_backend(home, "plan")
        result = wake(home, slug, now, commons=local_commons(home), force=True, model=model)
    except (NotFound, FormatError, ConflictError) as exc:
        fail(exc)
    if result.plan is None or result.landed is None:
        return f"first Planner wake: nothing to plan yet (add sources or hypotheses, then `rw planner wake {slug}`)"
    leaves = result.plan.leaves
    warm = sum(1 for contract in leaves if contract.warm)
    held = " (held for a person's approval: `rw hold list`)" if result.plan.held else ""
    return (f"first Planner wake: plan {result.plan.plan_id}{held}, {len(leaves)} leaves ({warm} warm), ledger "
            f"#{result.landed.row.seq}")


@cli.group("agent")
def agent_group() -> None:
    """Register agents and people (the local stand-in for Commons identity)."""


@agent_group.command("add")
@click.argument("handle")
@click.option("--operator", required=True, help="The accountable person's handle.")
@click.option("--human", is_flag=True, help="Register a person (steward, maintainer), not an agent.")
@click.option("--admin", is_flag=True, help="A person who manages every token over HTTP (the home's admin).")
@click.option("--expires", default=f"{TOKEN_TTL.days}d", show_default=True, help="The token's lifetime.")
@click.option("--project", "projects", multiple=True, help="Only for this project (repeatable; default: every).")
@click.option("--scope", "scopes", multiple=True, type=click.Choice(SCOPES),
              help="Only these kinds of action (repeatable; default: an agent read,leaf, a person all).")
def agent_add(handle: str, operator: str, human: bool, admin: bool, expires: str, projects: tuple[str, ...],
              scopes: tuple[Scope, ...]) -> None:
    """Register HANDLE and print its bearer token once (only a hash is kept)."""
    home = home_from_env()
    if admin and not human:
        raise click.UsageError("--admin is for a person (--human)")
    try:
        grant = Grant(parse_duration(expires, "--expires", positive=True), projects, scopes or None, admin)
        token = home.identities.add(handle, operator, "human" if human else "agent", now_from_env(), grant)
    except (FormatError, ConflictError) as exc:
        fail(exc)
    click.echo(token)
    click.echo(f"registered {handle} (operator {operator}); store this token now, it is not shown again",
               err=True)


@cli.group("leaf")
def leaf_group() -> None:
    """Write and read leaf contracts."""


@leaf_group.command("add")
@click.argument("slug")
@click.option("--kind", type=click.Choice(LEAF_KINDS), required=True)
@click.option("--id", "leaf_id", help="Leaf id (default: <kind>-<hash of the contract>).")
@click.option("--source", "source_id", help="extract: the source to extract from.")
@click.option("--hypothesis", "hypothesis_id", help="skeptic/link: the hypothesis.")
@click.option("--revision", type=int, help="skeptic/link: the hypothesis revision.")
@click.option("--gap", help="scout: what to look for.")
@click.option("--object", "object_path", help="review: the path of the object to review.")
@click.option("--finding", "finding_ids", multiple=True, help="link: a finding to file (repeatable).")
@click.option("--base", help="Base revision (default: the current tip).")
@click.option("--expires-in", default="24h", show_default=True, help="Lifetime, like 90m, 24h, 7d.")
@click.option("--title")
@remote_option
def leaf_add(slug: str, kind: str, leaf_id: str | None, source_id: str | None, hypothesis_id: str | None,
             revision: int | None, gap: str | None, object_path: str | None, finding_ids: tuple[str, ...],
             base: str | None, expires_in: str, title: str | None, server: str | None) -> None:
    """Write leaves/<id>.yaml as a verifier commit: a person's tool (RW_TOKEN of a person).

    Every input must exist at the base revision, and a hypothesis must not be loose."""
    request = LeafRequest(kind=kind, leaf_id=leaf_id, source_id=source_id, hypothesis_id=hypothesis_id,
                          revision=revision, gap=gap, object_path=object_path, finding_ids=finding_ids, base=base,
                          expires_in=expires_in, title=title)
    if server is not None:
        contract_id = remote_leaf_add(server, slug, {**asdict(request), "finding_ids": list(finding_ids)})
        click.echo(contract_id)
        return
    home = home_from_env()
    person = person_from_env(home)
    try:
        contract = person_leaf(home, slug, person, request, now=now_from_env())
    except (NotFound, FormatError, ConflictError) as exc:
        fail(exc)
    click.echo(contract.leaf_id)


def person_from_env(home: Home) -> Actor:
    """The person RW_TOKEN names; an agent's token, or none, is an authentication error."""
    actor = actor_from_env(home, "add_leaf")
    if actor.type != "human":
        fail(AuthError(f"{actor.handle} is an agent; only a person writes leaves by hand "
                       "(register one with `rw agent add HANDLE --operator OP --human`)"))
    return actor


@leaf_group.command("show")
@click.argument("slug")
@click.argument("leaf_id")
@click.option("--json", "as_json", is_flag=True)
@remote_option
def leaf_show(slug: str, leaf_id: str, as_json: bool, server: str | None) -> None:
    """Print a leaf's contract and its state, as the board shows it (open, claimed, expired,
    accepted, held, rejected, reverted)."""
    if server is not None:
        payload = remote_payload(server, slug, leaf_id)
        emit(payload, as_json, json.dumps(payload, indent=2, sort_keys=True))
        return
    home = home_from_env()
    try:
        view = home.project(slug).view(home.project(slug).tip())
        leaf = ProjectView(view).leaf(leaf_id)
        if leaf is None:
            raise NotFound(f"no leaf {leaf_id} in {slug}")
    except (NotFound, FormatError) as exc:
        fail(exc)
    now = now_from_env()
    claim = _local_claims(home, slug, now).get(leaf_id)
    payload = {**leaf_payload(view, leaf_id), "state": leaf_state(view, leaf.contract, claim, now),
               "claimed_by": claim.agent if claim else None}
    emit(payload, as_json, json.dumps(payload, indent=2, sort_keys=True))


def _local_claims(home: Home, slug: str, now: datetime) -> dict[str, Claim]:
    """The live claims of the Commons on this machine (the one `rw serve` on this home uses)."""
    from verifier.commons.backend import commons_database  # noqa: PLC0415
    from verifier.commons.local import LocalCommons  # noqa: PLC0415 - only the state commands open the Commons

    return LocalCommons(commons_database(home), home.identities).claims(slug, now=now)


@leaf_group.command("list")
@click.argument("slug")
@click.option("--json", "as_json", is_flag=True)
def leaf_list(slug: str, as_json: bool) -> None:
    """List the project's leaves and their states, as the board shows them."""
    home = home_from_env()
    now = now_from_env()
    try:
        repo = home.project(slug)
        view = repo.view(repo.tip())
        project = ProjectView(view)
        # Every contract parsed here, so a malformed one is named rather than left off the list.
        contracts = [leaf.contract for leaf_id in project.leaf_ids if (leaf := project.leaf(leaf_id)) is not None]
    except (NotFound, FormatError) as exc:
        fail(exc)
    claims = _local_claims(home, slug, now)
    rows = [{"leaf_id": contract.leaf_id, "kind": contract.kind,
             "state": leaf_state(view, contract, claims.get(contract.leaf_id), now),
             "expires_at": iso(contract.expires_at)} for contract in contracts]
    emit(rows, as_json, "\n".join(f"{r['leaf_id']}\t{r['kind']}\t{r['state']}\t{r['expires_at']}" for r in rows))


# Every format: the project files' (formats.schema) and the records other rooms write.
ALL_MODELS: dict[str, type[BaseModel]] = {
    **MODELS, "resolution-record": ResolutionRecord, "sealed-baseline": SealedBaseline, "seal-record": SealRecord,
    "settings": Settings, **{f"ledger-entry-{model.model_fields['action'].default}": model
                             for model in (InitEntry, LeafEntry, SubmitEntry, HoldEntry, RevertEntry, ResolveEntry,
                                           RepairEntry)},
}


@cli.command("schema")
@click.argument("kind", type=click.Choice(sorted(ALL_MODELS)))
def schema_cmd(kind: str) -> None:
    """Print the JSON Schema of one format, to check work before submitting."""
    click.echo(json.dumps(schema_of(kind, ALL_MODELS), indent=2, sort_keys=True))


@cli.group("source")
def source_group() -> None:
    """Read sources."""


@source_group.command("text")
@click.argument("slug")
@click.argument("source_id")
@remote_option
def source_text(slug: str, source_id: str, server: str | None) -> None:
    """Print the derived text that excerpts are matched against (offsets count into it)."""
    if server is not None:
        click.echo(remote_source_text(server, slug, source_id))
        return
    home = home_from_env()
    try:
        repo = home.project(slug)
        view = repo.view(repo.tip())
        record_data = view.read(source_record_path(source_id))
        if record_data is None:
            raise NotFound(f"no source {source_id} in {slug}")
        record = parse_source(record_data, source_record_path(source_id))
        path = source_bytes_path(source_id, EXTENSION_BY_MEDIA_TYPE[record.media_type])
        raw, blob = view.read(path), view.blob_id(path)
        if raw is None or blob is None:
            raise NotFound(f"source {source_id} has no retained bytes at {path}")
        text = home.source_text(blob, raw, record.media_type)
    except (NotFound, FormatError) as exc:
        fail(exc)
    except ValueError as exc:
        raise RwError(f"{source_id}: {exc}") from exc
    click.echo(text)


@cli.command("ledger")
@click.argument("slug")
@click.option("--json", "as_json", is_flag=True, help="One JSON row per line.")
@click.option("--verify", is_flag=True, help="Check the hash chain, the commits and the anchor.")
@remote_option
def ledger_cmd(slug: str, as_json: bool, verify: bool, server: str | None) -> None:
    """Show every attempt: outcome, leaf, agent, operator, and why."""
    if server is not None:
        _remote_ledger(server, slug, as_json, verify)
        return
    home = home_from_env()
    try:
        repo = home.project(slug)
    except NotFound as exc:
        fail(exc)
    if verify:
        report = verify_ledger(repo, home.read_anchor(slug))
        for problem in report.problems:
            click.echo(f"PROBLEM {problem}")
        click.echo(f"{'ok' if report.ok else 'FAILED'}: {len(report.rows)} rows checked")
        if not report.ok:
            raise SystemExit(EXIT_REJECTED)
        return
    for line, row in read_chain(repo.view(repo.tip())):
        if as_json:
            click.echo(line.decode("utf-8").rstrip("\n"))
            continue
        who = f"{row.actor}" + (f" ({row.operator})" if row.operator else "")
        what = f"{row.action}{' ' + row.kind if row.kind else ''}{' ' + row.leaf_id if row.leaf_id else ''}"
        why = f" [{row.reason_code}]" if row.reason_code else ""
        # The description may quote what an attempt sent (a refusal's field names): printed safe.
        click.echo(f"#{row.seq} {iso(row.at)} {row.outcome:<8} {shown(what)} by {who}{why}: {shown(row.description)}")


def _remote_ledger(server: str, slug: str, as_json: bool, verify: bool) -> None:
    """`rw ledger --server`: the rows page by page, or the service's check of the chain."""
    if verify:
        report = remote_get(server, project_url(slug, "ledger", "verify"))
        for problem in report.get("problems", []):
            click.echo(f"PROBLEM {problem}")
        click.echo(f"{'ok' if report.get('ok') else 'FAILED'}: {report.get('rows')} rows checked")
        if not report.get("ok"):
            raise SystemExit(EXIT_REJECTED)
        return
    after = -1
    while True:
        rows = remote_get(server, project_url(slug, "ledger"), {"after": str(after), "limit": "1000"}).get("rows", [])
        for row in rows:
            if as_json:
                click.echo(json.dumps(row, sort_keys=True, separators=(",", ":")))
                continue
            who = f"{row.get('actor')}" + (f" ({row['operator']})" if row.get("operator") else "")
            what = f"{row.get('action')}{' ' + row['kind'] if row.get('kind') else ''}" \
                   f"{' ' + row['leaf_id'] if row.get('leaf_id') else ''}"
            why = f" [{row['reason_code']}]" if row.get("reason_code") else ""
            click.echo(shown(f"#{row.get('seq')} {row.get('at')} {row.get('outcome'):<8} {what} by {who}{why}: "
                             f"{row.get('description')}"))
        if len(rows) < 1000:
            return
        after = int(rows[-1]["seq"])
