"""Start-up recovery: after a `kill -9` at any step, make every project consistent again.

Run by `rw serve` before any worker starts (it holds the home's service lock, so no other server
process is alive). In order:

1. half-stored trace bundles (`traces/.incoming-*`) are removed;
2. per project, under its writer lock: lock and temporary files a killed writer left in the bare
   repository (`refs/heads/main.lock`, `packed-refs.lock`, libgit2's `tmp_obj_*`, the anchor's
   temporary file) are removed, unreachable objects (refused and crashed attempts) are pruned,
   and an anchor that fell behind the branch (the process died
   between moving the branch and writing the anchor) catches up with the ledger head, but only
   when the anchored row is still in the chain unchanged: a ledger that disagrees with its anchor
   is reported, never "repaired";
3. every journal attempt that was running is settled: if the ledger has its row, the verdict is
   rebuilt from it; otherwise a `crash` row is written for it, so every authenticated attempt
   ends as exactly one ledger row;
4. an outage long enough to matter extends leaves and claims (`outage`);
5. orphan trace bundles (stored, but named by no ledger row) are reported;
6. Commons catches up with every project's ledger (`notifier`).

Every acceptance that was acknowledged to a client was on the branch before the answer was sent
(the branch moves before the response), so none of this can take one away.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from verifier.commons.adapter import Commons, Outage
from verifier.deploy.publishing import publish_leftovers
from verifier.errors import FormatError, HistoryBrokenError, LedgerIntegrityError, NotFound, RetryableError
from verifier.formats.entries import SubmitEntry
from verifier.formats.ledger import LedgerRow
from verifier.messages.notifier import Notifier
from verifier.pipeline.submit import HUMAN_EDIT
from verifier.pipeline.writer import ProjectWriter
from verifier.service.journal import Journal, Record
from verifier.service.outage import Heartbeat, apply_outage, outage_since
from verifier.state.project import rows_from
from verifier.store.home import Home
from verifier.store.hooks import ensure_hooks
from verifier.store.prune import prune_unreachable
from verifier.ui.board import readable_contract

_TRACE_ID = re.compile(r"^trc_[0-9a-f]{16}$")


@dataclass
class RecoveryReport:
    incoming_removed: int = 0
    leftovers_removed: list[str] = field(default_factory=list)
    anchors_caught_up: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    settled: list[dict[str, Any]] = field(default_factory=list)
    outage: Outage | None = None
    leaves_extended: dict[str, list[str]] = field(default_factory=dict)
    orphan_traces: list[str] = field(default_factory=list)
    messages_posted: int = 0

    def lines(self) -> list[str]:
        out = []
        if self.incoming_removed:
            out.append(f"removed {self.incoming_removed} half-stored trace bundle(s)")
        out += [f"removed leftover {path}" for path in self.leftovers_removed]
        out += [f"anchor of {slug} caught up with its ledger head" for slug in self.anchors_caught_up]
        out += [f"settled interrupted submission {s['submission_id']}: {s['outcome']}" for s in self.settled]
        if self.outage is not None:
            out.append(f"outage of {self.outage.duration} recorded; leaves extended: "
                       + (", ".join(f"{slug} {len(ids)}" for slug, ids in self.leaves_extended.items()) or "none"))
        if self.orphan_traces:
            out.append(f"{len(self.orphan_traces)} stored trace bundle(s) are named by no ledger row")
        out += [f"PROBLEM {problem}" for problem in self.problems]
        return out


def _remove(path: Path, report: RecoveryReport, home: Home) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        return
    report.leftovers_removed.append(str(path.relative_to(home.root)))


def _check_project(home: Home, slug: str, report: RecoveryReport) -> None:
    """Open the project's writer once: it removes what a killed writer left, catches the anchor up
    with a landing whose anchor write was cut short, and refuses a history someone else wrote;
    then publishes what a killed writer staged for the project's git host."""
    before = home.read_anchor(slug)
    try:
        with ProjectWriter.open(home, slug) as writer:
            report.leftovers_removed += [str(Path(path).relative_to(home.root)) for path in writer.cleaned]
            # Under the lock: what refused and crashed attempts left is dropped, so no copy carries it.
            if (problem := prune_unreachable(writer.repo.path)) is not None:
                report.problems.append(f"{slug}: {problem}")
        # On a git host: what a killed writer staged goes to the host now, or is dropped, so the
        # attempts settled below find their rows on main or nowhere (the lease was just taken).
        publish_leftovers(home, slug)
    except HistoryBrokenError as exc:
        report.problems.append(f"{slug}: {exc}")
        return
    except RetryableError:
        return  # a live instance writes it (its lease); this one cleans up when it takes the project over
    if home.read_anchor(slug) != before:
        report.anchors_caught_up.append(slug)


def _settle_edit(journal: Journal, record: Record, now: datetime, rows: list[LedgerRow]) -> dict[str, Any]:
    """A person's edit the service died under: its answer from the row it landed (the person's
    first `human` row since it began), else nothing was kept and the same key runs it again. A
    person's edit that never landed leaves no crash row: the ledger records attempts on leaves."""
    mine = [row for row in rows if row.action == "human" and row.actor == record.agent
            and row.trace_id in (record.trace_id, None)]
    if mine:
        verdict = {**_verdict_from_row(record, mine[0]), "leaf_id": None}
        answer: dict[str, Any] = {"verdict": verdict, "sealed": [], "note": None}
        journal.finish(record.id, answer, now=now, recovered=True)
        return verdict
    gone: dict[str, Any] = {"outcome": "crash", "project": record.project, "leaf_id": None, "rejections": [
        {"code": "crash", "message": "the service stopped during this edit; nothing of it was kept: send it again",
         "where": None}]}
    journal.finish(record.id, {"verdict": gone}, now=now, state="interrupted", recovered=True)
    return gone


def _verdict_from_row(record: Record, row: LedgerRow) -> dict[str, Any]:
    rejected = row.outcome in ("rejected", "crash")
    return {
        "outcome": row.outcome, "project": record.project, "leaf_id": record.leaf_id, "actor": record.agent,
        "summary": "" if rejected else row.description, "commit": row.commit, "ledger_seq": row.seq,
        "trace_id": row.trace_id, "tip": None, "holds": [],
        "notes": ["the service stopped before answering; this verdict was rebuilt from ledger row "
                  f"{row.seq} when it restarted"],
        "rejections": [{"code": row.reason_code or "crash", "message": row.description, "where": None}]
        if rejected else [],
    }


def settle(home: Home, journal: Journal, record: Record, now: datetime) -> dict[str, Any]:
    """Finish one attempt the service was running when it died; returns its verdict."""
    try:
        if record.project not in home.settings.backends.remotes:  # on a git host: the take-over clones it
            home.project(record.project)
    except NotFound:
        gone: dict[str, Any] = {
            "outcome": "crash", "project": record.project, "leaf_id": record.leaf_id,
            "rejections": [{"code": "crash", "message": "the project no longer exists", "where": None}]}
        journal.finish(record.id, gone, now=now, state="interrupted", recovered=True)
        return gone
    try:
        with ProjectWriter.open(home, record.project) as writer:
            return _settle_locked(home, journal, record, now, writer)
    except HistoryBrokenError as exc:
        broken: dict[str, Any] = {
            "outcome": "crash", "project": record.project, "leaf_id": record.leaf_id,
            "rejections": [{"code": "history_broken", "message": str(exc), "where": None}]}
        journal.finish(record.id, broken, now=now, state="interrupted", recovered=True)
        return broken


def _settle_locked(home: Home, journal: Journal, record: Record, now: datetime,
                   writer: ProjectWriter) -> dict[str, Any]:
    repo, tip = writer.repo, writer.tip
    rows = rows_from(repo.view(tip), record.ledger_from) if tip else []
    if record.leaf_id == HUMAN_EDIT:
        return _settle_edit(journal, record, now, rows)
    mine = [row for row in rows if row.action == "submit" and row.actor == record.agent
            and row.leaf_id == record.leaf_id and row.trace_id in (record.trace_id, None)]
    exact = [row for row in mine if row.trace_id == record.trace_id] or mine
    if exact:
        verdict = _verdict_from_row(record, exact[0])
        journal.finish(record.id, verdict, now=now, recovered=True)
        return verdict
    actor = home.identities.get(record.agent)
    contract = readable_contract(repo.view(tip), record.leaf_id) if tip else None
    description = ("the verifier was stopped (killed) during this attempt; nothing of it was kept but its "
                   "trace; submit again")
    stored = _TRACE_ID.match(record.trace_id) and home.traces.exists(record.trace_id)
    landed = writer.land(SubmitEntry(
        at=now, outcome="crash", description=description, leaf_id=record.leaf_id,
        kind=contract.kind if contract else None, actor=record.agent,
        actor_type=actor.type if actor else "agent", operator=actor.operator if actor else None,
        base_revision=record.base_revision, trace_id=record.trace_id if stored else None))
    crashed: dict[str, Any] = {
        "outcome": "crash", "project": record.project, "leaf_id": record.leaf_id, "actor": record.agent,
        "summary": "", "commit": None, "ledger_seq": landed.row.seq, "trace_id": landed.row.trace_id,
        "tip": landed.tip, "holds": [], "notes": [],
        "rejections": [{"code": "crash", "message": description, "where": None}]}
    journal.finish(record.id, crashed, now=now, state="interrupted", recovered=True)
    return crashed


def orphan_traces(home: Home) -> list[str]:
    """Stored bundles that no ledger row of any project names."""
    stored = set(home.traces.ids())
    if not stored:
        return []
    named: set[str] = set()
    for slug in home.projects():
        repo = home.project(slug)
        tip = repo.tip()
        if tip is None:
            continue
        try:
            named |= {row.trace_id for row in rows_from(repo.view(tip), 0) if row.trace_id}
        except (FormatError, LedgerIntegrityError):
            continue  # reported by the anchor check
    return sorted(stored - named)


def recover(home: Home, journal: Journal, commons: Commons, notifier: Notifier, heartbeat: Heartbeat, *,
            now: datetime, outage_min_s: float) -> RecoveryReport:
    report = RecoveryReport()
    report.incoming_removed = home.traces.clean_incoming()
    for leftover in home.root.glob(".*.tmp"):
        _remove(leftover, report, home)
    for slug in home.projects():
        _check_project(home, slug, report)
    ensure_hooks(home.root, [home.repo_path(slug) for slug in home.projects()])
    lease = timedelta(seconds=home.settings.backends.lease_s)
    for record in journal.orphaned(started_before=now - lease):
        try:
            verdict = settle(home, journal, record, now)
        except RetryableError:
            continue  # its project is held by a live instance now; a later recovery settles it
        report.settled.append({"submission_id": record.id, "outcome": verdict["outcome"]})
    report.outage = outage_since(heartbeat.last(), now, outage_min_s)
    if report.outage is not None:
        report.leaves_extended = apply_outage(home, commons, report.outage, now)
    heartbeat.beat(now)
    report.orphan_traces = orphan_traces(home)
    report.messages_posted = notifier.catch_up_all(now=now)
    return report
