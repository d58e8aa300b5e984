"""Commands of the Resolver's side: its keys, sealing baselines, the daily run, people's verdicts,
and the leak test (docs/resolver.md)."""

from __future__ import annotations

from typing import NoReturn

import click

from verifier.audits.leaks import LeakReport, leak_test
from verifier.cli.app import (
    EXIT_REJECTED,
    RwError,
    actor_from_env,
    cli,
    emit,
    fail,
    home_from_env,
    now_from_env,
    now_or,
    person_or_owner,
)
from verifier.cli.remote import project_url, remote_get, remote_option, remote_post
from verifier.errors import AuthError, ConflictError, FormatError, NotAuthorised, NotFound, VerifierError
from verifier.pipeline.ledger import read_chain
from verifier.roles.resolver import ResolverError, approve, resolve_project, set_verdict
from verifier.seal.keys import PRIVATE_PEM, KeyFileError, read_private_key, resolver_dir, write_keypair
from verifier.seal.sealing import SealError, key_id
from verifier.seal.status import hypothesis_ids, unsealed
from verifier.service import people
from verifier.store.home import Home
from verifier.store.identities import Actor
from verifier.writes.baseline import BaselineError, SealFailedError, model_backend, reseal, seal_missing
from verifier.writes.followups import seal_after_landing
from verifier.writes.revert import resolver_revert


def _setup_error(exc: Exception) -> NoReturn:
    raise RwError(str(exc)) from exc


def _private_key(home: Home) -> bytes:
    path = resolver_dir(home.root) / PRIVATE_PEM
    try:
        return read_private_key(path)
    except KeyFileError as exc:
        _setup_error(exc)
    except PermissionError as exc:
        raise RwError(f"cannot read {path}: run this as the Resolver's user (docs/resolver.md)") from exc


def _person(home: Home) -> Actor:
    return actor_from_env(home, "verdict")


@cli.group("resolver")
def resolver_group() -> None:
    """The Resolver's key pair."""


@resolver_group.command("keys")
def resolver_keys() -> None:
    """Create the Resolver's key pair in RW_HOME/resolver/ (private.pem 0600, public.pem 0644)."""
    home = home_from_env()
    try:
        private, public = write_keypair(resolver_dir(home.root))
    except KeyFileError as exc:
        _setup_error(exc)
    click.echo(f"created {private} (the Resolver's alone) and {public} (key {key_id(public.read_bytes())})")


def _echo_unsealed(home: Home, slug: str) -> None:
    """Each active hypothesis still without a current baseline, and the latest recorded reason."""
    repo = home.project(slug)
    view = repo.view(repo.tip())
    for item in unsealed(view, hypothesis_ids(view), (row for _, row in read_chain(view))):
        click.echo(item.line())


@cli.command("seal")
@click.argument("slug")
@remote_option
def seal_cmd(slug: str, server: str | None) -> None:
    """Seal a baseline for every active hypothesis that has no current one; say what stays
    unsealed and why (and record why, when no model or key is set up). With RW_TOKEN (always
    with --server): as that person, who must be the steward, a maintainer or an admin."""
    if server is not None:
        done = remote_post(server, project_url(slug, "seal"), {})
        click.echo("\n".join(f"sealed {h}" for h in done["sealed"]) or "every active hypothesis has a current baseline")
        return
    home = home_from_env()
    person = person_or_owner(home)
    try:
        sealed = seal_missing(home, slug, now=now_from_env(), backend=model_backend(home), person=person)
    except SealFailedError as exc:
        for hypothesis_id in exc.sealed:
            click.echo(f"sealed {hypothesis_id}")
        _echo_unsealed(home, slug)
        raise RwError(str(exc), EXIT_REJECTED) from exc
    except (BaselineError, SealError) as exc:
        try:
            seal_after_landing(home, slug, now=now_from_env())  # records why, once per reason
            _echo_unsealed(home, slug)
        except (NotFound, FormatError, BaselineError):
            pass  # the set-up error below says what to fix
        _setup_error(exc)
    except (NotFound, FormatError) as exc:
        fail(exc)
    click.echo("\n".join(f"sealed {h}" for h in sealed) or "every active hypothesis has a current baseline")


@cli.command("resolve")
@click.argument("slug")
@click.option("--now", "now_text", help="The reference date or time (default: RW_NOW or the clock).")
@click.option("--json", "as_json", is_flag=True)
def resolve_cmd(slug: str, now_text: str | None, as_json: bool) -> None:
    """Resolve every active hypothesis past its check date (meant to run daily)."""
    home = home_from_env()
    now = now_or(now_text)
    try:
        home.project(slug)
        backend = model_backend(home, "resolve")
        runs = resolve_project(home, slug, now=now, backend=backend, private_key=_private_key(home))
    except (BaselineError, ResolverError, SealError) as exc:
        _setup_error(exc)
    except (NotFound, FormatError, ConflictError) as exc:
        fail(exc)
    emit([{"hypothesis_id": r.hypothesis_id, "status": r.status, "detail": r.detail, "seq": r.seq} for r in runs],
         as_json, "\n".join(r.line() for r in runs) or f"nothing to resolve in {slug} on {now.date().isoformat()}")
    if any(r.status == "failed" for r in runs):
        raise SystemExit(EXIT_REJECTED)


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


@cli.group("verdict")
def verdict_group() -> None:
    """Verdicts waiting for a person (PROJECT.md holds verdicts), approvals and overrides."""


@verdict_group.command("list")
@click.argument("slug")
@click.option("--json", "as_json", is_flag=True)
@remote_option
def verdict_list(slug: str, as_json: bool, server: str | None) -> None:
    """List the Resolver's proposals waiting in queue/verdicts/."""
    if server is not None:
        items = remote_get(server, project_url(slug, "verdicts"))["proposals"]
    else:
        home = home_from_env()
        try:
            items = people.verdict_proposals(home, slug)  # the same answer GET .../verdicts gives
        except (NotFound, FormatError) as exc:
            fail(exc)
    emit(items, as_json, "\n".join(f"{i['hypothesis_id']}\t{i['verdict']}\t{i['confidence']:.2f}\t{i['rationale']}"
                                   for i in items) or "no verdict waits for a person")


@verdict_group.command("approve")
@click.argument("slug")
@click.argument("hypothesis_id")
@click.option("--reason", required=True, help="Why: kept in the commit, the record and the ledger.")
@remote_option
def verdict_approve(slug: str, hypothesis_id: str, reason: str, server: str | None) -> None:
    """Approve the Resolver's proposal for a hypothesis (token: the steward's, from RW_TOKEN)."""
    if server is not None:
        done = remote_post(server, project_url(slug, "verdicts", hypothesis_id, "approve"), {"reason": reason})
        click.echo(f"{done['description']} (ledger #{done['ledger_seq']})")
        return
    home = home_from_env()
    actor = _person(home)
    try:
        landed = approve(home, slug, actor, hypothesis_id, reason=reason, now=now_from_env())
    except (AuthError, NotAuthorised, NotFound, ConflictError, FormatError) as exc:
        fail(exc)
    except VerifierError as exc:
        _setup_error(exc)
    click.echo(f"{landed.row.description} (ledger #{landed.row.seq})")


@verdict_group.command("set")
@click.argument("slug")
@click.argument("hypothesis_id")
@click.argument("value", type=click.Choice(["true", "false", "unresolved"]))
@click.option("--confidence", type=float, required=True)
@click.option("--reason", required=True, help="Why: kept in the commit, the record and the ledger.")
@remote_option
def verdict_set(slug: str, hypothesis_id: str, value: str, confidence: float, reason: str,
                server: str | None) -> None:
    """Set or override a hypothesis's verdict (token: the steward's, from RW_TOKEN); scores recompute."""
    if server is not None:
        done = remote_post(server, project_url(slug, "verdicts", hypothesis_id),
                           {"verdict": value, "confidence": confidence, "reason": reason})
        click.echo(f"{done['description']} (ledger #{done['ledger_seq']})")
        return
    home = home_from_env()
    actor = _person(home)
    try:
        landed = set_verdict(home, slug, actor, hypothesis_id, value,  # type: ignore[arg-type]  # click.Choice
                             confidence=confidence, reason=reason, now=now_from_env())
    except (AuthError, NotAuthorised, NotFound, ConflictError, FormatError) as exc:
        fail(exc)
    except VerifierError as exc:
        _setup_error(exc)
    click.echo(f"{landed.row.description} (ledger #{landed.row.seq})")


def _leak_text(report: LeakReport) -> str:
    lines = [item.line() for item in report.leaks] + [f"PROBLEM {p}" for p in report.problems]
    searched = ", ".join(report.baselines) or "none"
    lines.append(f"{'ok' if report.ok else 'FAILED'}: {len(report.baselines)} sealed baselines ({searched}) "
                 f"searched for in {report.payloads} agent-visible payloads")
    return "\n".join(lines)


@cli.command("leaks")
@click.argument("slug")
@click.option("--reseal", "reseal_leaked", is_flag=True, help="Regenerate and reseal every leaked baseline.")
@click.option("--json", "as_json", is_flag=True)
def leaks_cmd(slug: str, reseal_leaked: bool, as_json: bool) -> None:
    """Search every agent-visible payload for every baseline still sealed; exit 1 on a leak."""
    home = home_from_env()
    now = now_from_env()
    try:
        report = leak_test(home, slug, now=now, private_key=_private_key(home))
    except (NotFound, FormatError) as exc:
        fail(exc)
    resealed = []
    if reseal_leaked and report.leaks:
        try:
            backend = model_backend(home)
            for hypothesis_id, leaks in sorted(report.leaked().items()):
                wheres = ", ".join(sorted({leak.where for leak in leaks})[:5])
                secrets = ", ".join(sorted({leak.secret for leak in leaks}))
                landed = reseal(home, slug, hypothesis_id, now=now, backend=backend,
                                reason=f"the previous seal leaked: {secrets} found in {wheres}")
                resealed.append({"hypothesis_id": hypothesis_id, "seq": landed.row.seq})
        except (BaselineError, SealError) as exc:
            _setup_error(exc)
    data = {"ok": report.ok, "baselines": report.baselines, "payloads": report.payloads,
            "leaks": [{"hypothesis_id": b.hypothesis_id, "secret": b.leak.secret, "encoding": b.leak.encoding,
                       "where": b.leak.where} for b in report.leaks],
            "problems": report.problems, "resealed": resealed}
    text = _leak_text(report) + "".join(f"\nresealed {r['hypothesis_id']} (ledger #{r['seq']})" for r in resealed)
    emit(data, as_json, text)
    if not report.ok:
        raise SystemExit(EXIT_REJECTED)
