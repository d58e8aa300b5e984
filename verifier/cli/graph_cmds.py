"""Commands for the evidence graph's people-facing operations: holds, reverts, replay, digest,
scores."""

from __future__ import annotations

import json
import os

import click

from verifier.audits.replay import replay
from verifier.cli.app import EXIT_REJECTED, cli, emit, fail, home_from_env, now_from_env
from verifier.errors import AuthError, ConflictError, FormatError, NotFound
from verifier.pipeline.digest import digest
from verifier.state.layout import USE_SCORES
from verifier.state.project import ProjectView
from verifier.store.identities import Actor
from verifier.ui.leaf_fate import LandedObjects, reverted_by_operator
from verifier.writes.followups import seal_after_landing
from verifier.writes.holds import decide
from verifier.writes.revert import revert


def _person() -> Actor:
    home = home_from_env()
    try:
        return home.identities.authenticate(os.environ.get("RW_TOKEN", ""))
    except AuthError as exc:
        fail(exc)


@cli.group("hold")
def hold_group() -> None:
    """What waits in the queue (PROJECT.md holds), and a person's decision on it."""


@hold_group.command("list")
@click.argument("slug")
@click.option("--json", "as_json", is_flag=True)
def hold_list(slug: str, as_json: bool) -> None:
    """List held objects."""
    home = home_from_env()
    try:
        repo = home.project(slug)
    except NotFound as exc:
        fail(exc)
    items = [{"hold": h.hold, "object_id": h.object_id, "type": h.type, "paths": list(h.paths),
              "leaf_id": h.leaf_id} for h in ProjectView(repo.view(repo.tip())).held]
    emit(items, as_json, "\n".join(f"{i['hold']}\t{i['object_id']}\t{i['type']}\t{i['leaf_id'] or '-'}"
                                   for i in items) or "nothing is held")


def _decide(slug: str, object_id: str, reason: str, approve: bool) -> None:
    home = home_from_env()
    actor = _person()
    try:
        landed = decide(home, slug, actor, object_id, approve=approve, reason=reason, now=now_from_env())
    except (AuthError, NotFound, ConflictError, FormatError) as exc:
        fail(exc)
    verb = "approved" if approve else "rejected"
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
def hold_approve(slug: str, object_id: str, reason: str) -> None:
    """Approve a held object into the corpus (token: a person's, from RW_TOKEN)."""
    _decide(slug, object_id, reason, True)


@hold_group.command("reject")
@click.argument("slug")
@click.argument("object_id")
@click.option("--reason", required=True)
def hold_reject(slug: str, object_id: str, reason: str) -> None:
    """Reject a held object (it leaves the queue; the ledger keeps the decision)."""
    _decide(slug, object_id, reason, False)


@cli.command("revert")
@click.argument("slug")
@click.argument("commit")
@click.option("--reason", required=True, help="Why: kept in the commit message and the ledger.")
def revert_cmd(slug: str, commit: str, reason: str) -> None:
    """Revert an accepted contribution, withdrawing its citations (token: a person's)."""
    home = home_from_env()
    actor = _person()
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
        fail(exc)
    emit({"ok": report.ok, "commits": report.commits, "rows": report.rows, "differences": report.differences},
         as_json, "\n".join([*(f"DIFFERENCE {d}" for d in report.differences),
                             f"{'ok' if report.ok else 'FAILED'}: {report.commits} commits, "
                             f"{report.rows} ledger rows"]))
    if not report.ok:
        raise SystemExit(EXIT_REJECTED)


@cli.command("digest")
@click.argument("slug")
def digest_cmd(slug: str) -> None:
    """Print the project digest as JSON: newest reports, hypothesis moves, open gaps, open leaves."""
    home = home_from_env()
    try:
        value = digest(home, slug, now_from_env())
    except NotFound as exc:
        fail(exc)
    click.echo(json.dumps(value, indent=2, sort_keys=True))


@cli.command("scores")
@click.argument("slug")
@click.option("--json", "as_json", is_flag=True)
def scores_cmd(slug: str, as_json: bool) -> None:
    """Show the v0 components per operator, side by side (never combined)."""
    home = home_from_env()
    try:
        repo = home.project(slug)
    except NotFound as exc:
        fail(exc)
    view = repo.view(repo.tip())
    summary = json.loads(view.read(USE_SCORES) or b"{}")
    # A reverted leaf was accepted once (the ledger keeps that) but is not accepted now: it is
    # counted as reverted, never as accepted.
    reverted = reverted_by_operator(view, LandedObjects())
    lines = ["operator\taccepted_leaves\treverted_leaves\tuse_score\tusd_per_accepted_object\t"
             "cost_undisclosed_leaves"]
    for name, row in sorted(summary.get("operators", {}).items()):
        gone = reverted.get(name, [])
        row["accepted_leaves"] = max(0, int(row.get("accepted_leaves", 0)) - len(gone))
        row["reverted_leaves"] = len(gone)
        # Undisclosed cost is unknown, never 0: shown as such, with how many leaves kept it back.
        per_object = row.get("usd_per_accepted_object")
        lines.append(f"{name}\t{row['accepted_leaves']}\t{len(gone)}\t{row['use_score']}\t"
                     f"{'unknown' if per_object is None else per_object}\t{row.get('usd_undisclosed', 0)}")
    lines += [f"{h}\tevidence health {u}" for h, u in sorted(summary.get("hypotheses", {}).items())]
    emit(summary, as_json, "\n".join(lines))
