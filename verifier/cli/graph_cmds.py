"""Commands for the evidence graph's people-facing operations: holds, reverts, replay, digest,
scores, and the audit log of denials. Each but replay also asks a service (`--server` or
RW_SERVER, verifier.cli.remote) instead of this machine's RW_HOME."""

from __future__ import annotations

import json
import os

import click

from verifier.audits.replay import replay
from verifier.cli.app import (
    EXIT_REJECTED,
    RwError,
    actor_from_env,
    cli,
    emit,
    fail,
    home_from_env,
    now_from_env,
    person_or_owner,
)
from verifier.cli.remote import project_url, remote_get, remote_option, remote_post
from verifier.errors import AuthError, ConflictError, FormatError, NotFound
from verifier.pipeline.digest import digest
from verifier.service import people
from verifier.store.identities import Actor
from verifier.writes.followups import seal_after_landing
from verifier.writes.holds import decide
from verifier.writes.revert import revert


def _person(action: str, slug: str) -> Actor:
    return actor_from_env(home_from_env(), action, slug)


@cli.group("hold")
def hold_group() -> None:
    """What waits in the queue (PROJECT.md holds), and a person's decision on it."""


@hold_group.command("list")
@click.argument("slug")
@click.option("--json", "as_json", is_flag=True)
@remote_option
def hold_list(slug: str, as_json: bool, server: str | None) -> None:
    """List held objects."""
    if server is not None:
        items = remote_get(server, project_url(slug, "holds"))["held"]
    else:
        home = home_from_env()
        try:
            items = people.held(home, slug)  # the same answer GET /projects/{slug}/holds gives
        except NotFound as exc:
            fail(exc)
    emit(items, as_json, "\n".join(f"{i['hold']}\t{i['object_id']}\t{i['type']}\t{i['leaf_id'] or '-'}"
                                   for i in items) or "nothing is held")


def _decide(slug: str, object_id: str, reason: str, approve: bool, server: str | None) -> None:
    verb = "approved" if approve else "rejected"
    if server is not None:
        done = remote_post(server, project_url(slug, "holds", object_id, "approve" if approve else "reject"),
                           {"reason": reason})
        click.echo(f"{verb} {object_id} (commit {done['commit']}, ledger #{done['ledger_seq']})")
        if done.get("sealed"):
            click.echo(f"sealed baseline for {', '.join(done['sealed'])}", err=True)
        if done.get("note"):
            click.echo(f"note: {done['note']}", err=True)
        return
    home = home_from_env()
    actor = _person("decide_hold", slug)
    try:
        landed = decide(home, slug, actor, object_id, approve=approve, reason=reason, now=now_from_env())
    except (AuthError, NotFound, ConflictError, FormatError) as exc:
        fail(exc)
    click.echo(f"{verb} {object_id} (commit {landed.commit}, ledger #{landed.row.seq})")
    if approve:
        sealed, note = seal_after_landing(home, slug, now=now_from_env())
        if sealed:
            click.echo(f"sealed baseline for {', '.join(sealed)}", err=True)
        if note:
            click.echo(f"note: {note}", err=True)


@hold_group.command("approve")
@click.argument("slug")
@click.argument("object_id")
@click.option("--reason", required=True)
@remote_option
def hold_approve(slug: str, object_id: str, reason: str, server: str | None) -> None:
    """Approve a held object into the corpus (token: the steward's, from RW_TOKEN)."""
    _decide(slug, object_id, reason, True, server)


@hold_group.command("reject")
@click.argument("slug")
@click.argument("object_id")
@click.option("--reason", required=True)
@remote_option
def hold_reject(slug: str, object_id: str, reason: str, server: str | None) -> None:
    """Reject a held object (it leaves the queue; the ledger keeps the decision; token: the steward's)."""
    _decide(slug, object_id, reason, False, server)


@cli.command("revert")
@click.argument("slug")
@click.argument("commit")
@click.option("--reason", required=True, help="Why: kept in the commit message and the ledger.")
@remote_option
def revert_cmd(slug: str, commit: str, reason: str, server: str | None) -> None:
    """Revert an accepted contribution, withdrawing its citations (token: the steward's or a maintainer's)."""
    if server is not None:
        done = remote_post(server, project_url(slug, "reverts"), {"commit": commit, "reason": reason})
        click.echo(f"reverted {commit} (revert commit {done['commit']}, ledger #{done['ledger_seq']})")
        if done.get("withdrew"):
            click.echo(f"withdrew {done['withdrew']}")
        return
    home = home_from_env()
    actor = _person("revert", slug)
    try:
        landed = revert(home, slug, actor, commit, reason=reason, now=now_from_env())
    except (AuthError, NotFound, ConflictError, FormatError) as exc:
        fail(exc)
    click.echo(f"reverted {commit} (revert commit {landed.commit}, ledger #{landed.row.seq})")
    if "; withdrew " in landed.row.description:  # the cascade, said at revert time (issue 10)
        click.echo("withdrew " + landed.row.description.rsplit("; withdrew ", 1)[1])


@cli.command("replay")
@click.argument("slug")
@click.option("--json", "as_json", is_flag=True)
def replay_cmd(slug: str, as_json: bool) -> None:
    """Rebuild ledger, scores and leaf results from git history alone; name every difference."""
    home = home_from_env()
    try:
        report = replay(home.project(slug), home.read_anchor(slug), check_anchor=True)
    except NotFound as exc:
        if os.environ.get("RW_SERVER"):  # the hint in the error (set RW_SERVER) does not hold here
            raise RwError(f"no project {slug!r} in {home.layout.projects}: `rw replay` rebuilds from the "
                          "repository and anchor on this machine and has no --server; run it where the project "
                          "lives (`rw ledger SLUG --verify --server URL` checks the chain from here)",
                          exc.exit_code) from exc
        fail(exc)
    emit({"ok": report.ok, "commits": report.commits, "rows": report.rows, "differences": report.differences},
         as_json, "\n".join([*(f"DIFFERENCE {d}" for d in report.differences),
                             f"{'ok' if report.ok else 'FAILED'}: {report.commits} commits, "
                             f"{report.rows} ledger rows"]))
    if not report.ok:
        raise SystemExit(EXIT_REJECTED)


@cli.command("digest")
@click.argument("slug")
@remote_option
def digest_cmd(slug: str, server: str | None) -> None:
    """Print the project digest as JSON: newest reports, hypothesis moves, open gaps, open leaves."""
    if server is not None:
        click.echo(json.dumps(remote_get(server, project_url(slug, "digest")), indent=2, sort_keys=True))
        return
    home = home_from_env()
    try:
        value = digest(home, slug, now_from_env())
    except NotFound as exc:
        fail(exc)
    click.echo(json.dumps(value, indent=2, sort_keys=True))


@cli.command("scores")
@click.argument("slug")
@click.option("--json", "as_json", is_flag=True)
@remote_option
def scores_cmd(slug: str, as_json: bool, server: str | None) -> None:
    """Show the v0 components per operator, side by side (never combined)."""
    if server is not None:
        summary = remote_get(server, project_url(slug, "scores"))["scores"]
    else:
        home = home_from_env()
        try:
            summary = people.scores(home, slug)  # reverted leaves counted apart, as GET .../scores
        except NotFound as exc:
            fail(exc)
    lines = ["operator\taccepted_leaves\treverted_leaves\tuse_score\tusd_per_accepted_object\t"
             "cost_undisclosed_leaves"]
    for name, row in sorted(summary.get("operators", {}).items()):
        gone_count = int(row.get("reverted_leaves", 0))
        # Undisclosed cost is unknown, never 0: shown as such, with how many leaves kept it back.
        per_object = row.get("usd_per_accepted_object")
        lines.append(f"{name}\t{row['accepted_leaves']}\t{gone_count}\t{row['use_score']}\t"
                     f"{'unknown' if per_object is None else per_object}\t{row.get('usd_undisclosed', 0)}")
    lines += [f"{h}\tevidence health {u}" for h, u in sorted(summary.get("hypotheses", {}).items())]
    emit(summary, as_json, "\n".join(lines))


@cli.command("audit")
@click.argument("slug")
@click.option("--json", "as_json", is_flag=True)
@remote_option
def audit_cmd(slug: str, as_json: bool, server: str | None) -> None:
    """The project's refused authentications and authority checks (who, what, why, when; never a
    token), oldest first: the steward's and the admins' to read (token: theirs, from RW_TOKEN;
    without one, the home's owner at its shell)."""
    if server is not None:
        denials = remote_get(server, project_url(slug, "audit"), auth=True)["denials"]
    else:
        home = home_from_env()
        try:
            denials = people.audit(home, person_or_owner(home), slug, now=now_from_env())["denials"]
        except NotFound as exc:
            fail(exc)
    rows = list(denials) if isinstance(denials, list) else []
    emit(rows, as_json, "\n".join(f"{d['at']} {d['kind']:<14} {d['door']:<4} {d['who']} {d['action']}: {d['why']}"
                                  for d in rows) or f"no denial is recorded for {slug}")
