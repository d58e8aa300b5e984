"""The submission pipeline: the one place that knows the order of the steps (design §6).

A submission is (project, leaf id, patch bytes, trace bundle files, bearer token); a person's
edit outside any leaf has no leaf id, an optional trace and a base revision. It travels:

 1. authenticate   the token names the actor and its operator; nothing in the body, the
                   manifest or the patch can say otherwise (a mismatch is refused). A failure
                   here raises AuthError and writes nothing: strangers cannot fill the ledger.
 2. trace ingest   parts present, level L1 or above, 20 MB cap, patch.diff byte-identical to
                   the patch, secret scan (a hit refuses, nothing is kept, and a bearer token of
                   ours found in it is revoked). All before any patch work.
 3. parse patch    strict git diff parsing: path names, modes, hunks (patch.parse); the secret
                   gate over everything the patch writes (binary contents decoded), for agents
                   and people alike; then the bundle is stored under trc_<sha256[:16]> (a refused
                   attempt's bundle later moves to a bounded per-agent quarantine), and the URL
                   check of new sources, for a scout leaf or a person's edit only.
    [the project's writer is opened here (lock, history check) and held to the end]
 4. leaf & base    the leaf exists, is open, unexpired, its plan not held; the submission's base
                   is the leaf's base_revision or a later commit on the branch (a person's edit:
                   any commit on the branch); if the branch has moved since, the patch lands on
                   the tip when none of its paths changed, else it is stale, never merged.
 5. write set      every change allowed by the leaf's may_write (a person: anything but the
                   verifier's paths); verifier- and human-only paths refused; then the patch is
                   applied exactly to the tree it lands on, in memory.
 6. kind check     the leaf kind's deterministic check (a person's edit: every file held to its
                   format) on the tree as it would be (checks/).
 7. route          objects of a held type go to queue/<type>/ (pipeline.routing); people's edits
                   are not held.
 8. rescore        the use scores take the landing's writes (pipeline.scores, scoring.use).
 9. land           contribution commit (author the actor, verifier committer, trailers), ledger
                   row, scores and leaf result, branch move and anchor, together or not at all
                   (pipeline.writer).

Every attempt that passes step 1 ends as exactly one ledger row: accepted, held, rejected, or
crash when something unexpected broke (and then nothing else of the attempt is kept).
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from verifier.checks.amend import amendment_writes
from verifier.checks.context import CheckContext
from verifier.checks.registry import check_for
from verifier.errors import (
    ConflictError,
    FormatError,
    HistoryBrokenError,
    NotFound,
    Rejected,
    Rejection,
    RetryableError,
)
from verifier.formats.base import iso
from verifier.formats.entries import SubmitEntry
from verifier.formats.fetch import FetchOutcome
from verifier.formats.leaf import LeafContract, LeafResult, WriteRule, parse_leaf, parse_leaf_result
from verifier.formats.ledger import Cost
from verifier.formats.project import parse_project
from verifier.formats.trace import TraceRecord
from verifier.patch.parse import ParsedPatch, parse_patch
from verifier.pipeline.failed_sources import failed_source_contribution
from verifier.pipeline.inputs import fetch_new_sources, source_texts
from verifier.pipeline.landing import Contribution, Landed
from verifier.pipeline.patching import apply_to, changed_since, check_write_set
from verifier.pipeline.routing import count_objects, object_ids, route
from verifier.pipeline.scores import apply_writes
from verifier.pipeline.secrets_gate import gate_patch, revoke_on_trace_secret
from verifier.pipeline.trace import inspect_bundle
from verifier.pipeline.verdict import Outcome, Submission, Verdict
from verifier.pipeline.writer import ProjectWriter
from verifier.scoring.use import ScoreBook
from verifier.state.layout import (
    PROJECT_FILE,
    QUEUE_DIR,
    leaf_path,
    leaf_result_path,
    plan_path,
    queue_path,
)
from verifier.state.view import Overlay
from verifier.store.fetcher import Fetcher
from verifier.store.gitrepo import GitTree, Person, ProjectRepo, agent_email
from verifier.store.home import Home
from verifier.store.identities import Actor

__all__ = ["HUMAN_EDIT", "Outcome", "Submission", "Verdict", "submit"]  # the pipeline's public face

HUMAN_EDIT = "human-edit"  # the leaf_id a person's optional trace names for an edit outside leaves
HUMAN_RULES = [WriteRule(op="write", path="**")]  # people may write anything but verifier-only paths


@dataclass
class Attempt:
    """What is known so far about one submission; grows as the steps pass."""

    actor: Actor
    submission: Submission
    trace: TraceRecord | None = None
    leaf: LeafContract | None = None
    base: str | None = None
    # A pushed commit keeps its own author, subject and body (git's door, pipeline.push).
    author: Person | None = None
    subject: str = ""
    body: str = ""
    trace_stored: bool = False  # this attempt stored the bundle (so a refusal quarantines it)

    def entry(self, now: datetime, outcome: Outcome, *, reason: Rejection | None = None,
              description: str = "", objects: list[str] | None = None) -> SubmitEntry:
        manifest = self.trace.manifest if self.trace else None
        return SubmitEntry(
            at=now, action="submit" if self.submission.leaf_id else "human", outcome=outcome,
            reason_code=reason.code if reason else None,
            description=(reason.render() if reason else description)[:4000],
            leaf_id=self.submission.leaf_id,
            kind=self.leaf.kind if self.leaf else (None if self.submission.leaf_id else "human"),
            actor=self.actor.handle, actor_type=self.actor.type, operator=self.actor.operator,
            base_revision=self.base, trace_id=self.trace.trace_id if self.trace else None,
            cost=Cost(tokens=manifest.tokens if manifest else None, usd=manifest.usd if manifest else None,
                      duration_s=manifest.duration_s if manifest else None),
            model=manifest.model if manifest else None,
            skill_version=manifest.skill_version if manifest else None,
            objects=objects,
        )


def _reject(code: str, message: str, where: str | None = None) -> Rejected:
    return Rejected(Rejection(code, message, where))


def _load_leaf(view: GitTree, leaf_id: str) -> LeafContract:
    data = view.read(leaf_path(leaf_id))
    if data is None:
        raise _reject("unknown_leaf", f"there is no leaf {leaf_id} in this project", leaf_path(leaf_id))
    return parse_leaf(data, leaf_path(leaf_id))


def _check_assertions(actor: Actor, trace: TraceRecord, leaf_id: str | None) -> None:
    manifest = trace.manifest
    if manifest.agent != actor.handle or manifest.operator != actor.operator:
        raise _reject(
            "actor_mismatch",
            f"manifest.json names agent {manifest.agent} of operator {manifest.operator}, but the token "
            f"belongs to {actor.handle} of operator {actor.operator}",
            "trace/manifest.json",
        )
    expected = leaf_id or HUMAN_EDIT
    if manifest.leaf_id != expected:
        raise _reject("leaf_mismatch", f"manifest.json is for leaf {manifest.leaf_id}, not {expected}",
                      "trace/manifest.json")


def _resolve_base(repo: ProjectRepo, leaf: LeafContract, base: str, tip: str) -> None:
    rebase = f"the current revision is {tip}; rebase your patch onto it and resubmit with that base_revision"
    if not repo.has_object(base):
        raise _reject("wrong_base", f"base_revision {base} is not in this project; {rebase}")
    if not repo.is_ancestor(leaf.base_revision, base) or not repo.is_ancestor(base, tip):
        raise _reject(
            "wrong_base",
            f"the patch is against {base}, but leaf {leaf.leaf_id} is pinned to {leaf.base_revision} "
            f"(a later revision on the branch is fine); {rebase}",
        )


def _open_leaf(tip_view: GitTree, attempt: Attempt, now: datetime) -> LeafContract:
    """The leaf exists, is open, unexpired, and its plan is not held."""
    assert attempt.submission.leaf_id is not None
    leaf = attempt.leaf = _load_leaf(tip_view, attempt.submission.leaf_id)
    result_data = tip_view.read(leaf_result_path(leaf.leaf_id))
    if result_data is not None:
        done = parse_leaf_result(result_data, leaf_result_path(leaf.leaf_id))
        raise _reject("leaf_closed", f"leaf {leaf.leaf_id} was already {done.outcome} at commit {done.commit}")
    if now >= leaf.expires_at:
        raise _reject("leaf_expired", f"leaf {leaf.leaf_id} expired at {iso(leaf.expires_at)}")
    if leaf.plan_id and tip_view.read(plan_path(leaf.plan_id)) is None and tip_view.read(
            queue_path("plans", plan_path(leaf.plan_id))) is not None:
        raise _reject("plan_held", f"plan {leaf.plan_id} is held in queue/plans awaiting approval")
    return leaf


def _human_base(repo: ProjectRepo, attempt: Attempt, tip: str) -> str:
    if attempt.actor.type != "human":
        raise _reject("leaf_required", "agents submit against a leaf (--leaf); only people edit outside leaves")
    wanted = attempt.submission.base or tip
    try:
        base = str(repo.commit(wanted).id)  # a branch name or short id becomes the full commit id
    except NotFound:
        raise _reject("wrong_base", f"base {wanted[:64]!r} names no commit; the current revision is {tip}") from None
    if not repo.is_ancestor(base, tip):
        raise _reject("wrong_base", f"base {base} is not on the branch; the current revision is {tip}")
    return base


def leaf_and_base(writer: ProjectWriter, attempt: Attempt, now: datetime) -> str:
    """the leaf is open and the base is on its line (a person: any commit on the branch)."""
    tip = writer.tip
    assert tip is not None
    if attempt.submission.leaf_id is None:
        attempt.base = _human_base(writer.repo, attempt, tip)
        return attempt.base
    leaf = _open_leaf(writer.view(), attempt, now)
    assert attempt.trace is not None
    base = attempt.base = attempt.trace.manifest.base_revision
    _resolve_base(writer.repo, leaf, base, tip)
    return base


def write_set(writer: ProjectWriter, attempt: Attempt, patch: ParsedPatch, base: str) -> dict[str, bytes | None]:
    """every change allowed, nothing stale, and the patch applied exactly to the tip."""
    leaf = attempt.leaf
    check_write_set(patch, HUMAN_RULES if leaf is None else leaf.may_write, human=leaf is None)
    tip_view = writer.view()
    if base != writer.tip:
        moved = changed_since(writer.repo.view(base), tip_view, patch.touched())
        if moved:
            raise _reject(
                "stale",
                f"{', '.join(moved[:5])} changed since your base {base[:12]}; the current revision is {writer.tip}: "
                "rebase onto it and resubmit (patches are never merged)",
            )
    return apply_to(tip_view, patch)


def kind_check(home: Home, writer: ProjectWriter, attempt: Attempt, writes: dict[str, bytes | None],
               fetches: dict[str, FetchOutcome], now: datetime) -> Any:
    """the leaf kind's deterministic check (a person's edit: every file to its format)."""
    tip_view, leaf = writer.view(), attempt.leaf
    project, _ = parse_project(tip_view.read(PROJECT_FILE) or b"", PROJECT_FILE)
    overlay = Overlay(tip_view, writes)
    context = CheckContext(
        leaf=leaf, actor=attempt.actor.handle, project=project, tree=overlay, writes=writes, now=now,
        source_texts=source_texts(home, overlay, leaf, writes), fetches=fetches,
        base_tree=tip_view, actor_type=attempt.actor.type,
    )
    result = check_for(leaf.kind if leaf is not None else "human")(context)
    if not result.accepted:
        raise Rejected(result.rejections)
    return result


def route_holds(writer: ProjectWriter, attempt: Attempt, writes: dict[str, bytes | None],
                result: Any) -> tuple[dict[str, bytes | None], list[str]]:
    """objects of a held type go to queue/<type>/; people's edits are not held."""
    if attempt.leaf is None:
        return writes, []  # people's edits are their own judgement: holds gate what agents bring in
    tip_view = writer.view()
    project, _ = parse_project(tip_view.read(PROJECT_FILE) or b"", PROJECT_FILE)
    routed, holds = route(writes, project.holds, result.hold_paths)
    queued = [path for path, data in routed.items() if data is not None and path.startswith(f"{QUEUE_DIR}/")
              and tip_view.read(path) is not None]
    if queued:
        # Never overwrite what already waits for a person: the first submission keeps its place.
        raise _reject("duplicate_id", f"{queued[0]} is already held in the queue, waiting for a person", queued[0])
    routed.update(amendment_writes(tip_view, routed))  # an accepted amend review rewrites its object
    return routed, holds


def rescore(writer: ProjectWriter, attempt: Attempt, routed: dict[str, bytes | None]) -> dict[str, bytes | None]:
    """the use scores take the landing's writes."""
    tip_view = writer.view()
    book = ScoreBook(tip_view.read)
    objects = apply_writes(book, tip_view, routed, attempt.actor.operator)
    if attempt.leaf is not None:
        manifest = attempt.trace.manifest if attempt.trace is not None else None
        book.record_submission(attempt.actor.operator, objects=objects or count_objects(routed),
                               tokens=manifest.tokens if manifest else None, usd=manifest.usd if manifest else None)
    return book.writes()


def land_accepted(writer: ProjectWriter, attempt: Attempt, routed: dict[str, bytes | None], holds: list[str],
                  score_writes: dict[str, bytes | None], result: Any, now: datetime) -> Verdict:
    """contribution commit, ledger row, scores and leaf result, branch move and anchor."""
    leaf, trace, actor = attempt.leaf, attempt.trace, attempt.actor
    outcome: Outcome = "held" if holds else "accepted"
    kind = leaf.kind if leaf is not None else "edit"
    trailers = {"Operator": actor.operator}
    if leaf is not None:
        trailers["Leaf"] = leaf.leaf_id
    if trace is not None:
        trailers["Trace"] = trace.trace_id
    contribution = Contribution(
        writes=routed, author=attempt.author or Person(actor.handle, agent_email(actor.handle)),
        subject=attempt.subject or f"{kind}: {result.summary}" + (f" (held: {', '.join(holds)})" if holds else ""),
        # The manifest's summary is part of the private trace: it never goes into the public history.
        body=attempt.body, trailers=trailers,
    )

    def bookkeeping(commit: str | None) -> dict[str, bytes | None]:
        files: dict[str, bytes | None] = dict(score_writes)
        if leaf is not None:
            files[leaf_result_path(leaf.leaf_id)] = LeafResult(
                leaf_id=leaf.leaf_id, outcome=outcome, commit=commit, actor=actor.handle, operator=actor.operator,
                trace_id=trace.trace_id if trace else None, at=now).dump()
        return files

    description = result.summary + ("; " + "; ".join(result.notes) if result.notes else "")
    entry = attempt.entry(now, outcome, description=description,
                          objects=object_ids(routed) if leaf is not None else None)
    landed = writer.land(entry, contribution=contribution, bookkeeping_of=bookkeeping)
    return _verdict(attempt, outcome, landed, [], summary=result.summary, holds=holds, notes=list(result.notes))


def fetches_for(home: Home, attempt: Attempt, patch: ParsedPatch, fetcher: Fetcher) -> dict[str, FetchOutcome]:
    """The URL check of new sources. The verifier fetches on an agent's behalf only for a scout
    leaf whose write set allows the sources (or a person's edit): anyone else's URLs are never
    requested."""
    repo = home.project(attempt.submission.slug)
    view = repo.view(repo.tip())
    try:
        project, _ = parse_project(view.read(PROJECT_FILE) or b"", PROJECT_FILE)
    except FormatError as exc:
        raise _reject("bad_project", f"the project's PROJECT.md is unreadable: {exc}") from exc
    leaf_id = attempt.submission.leaf_id
    if leaf_id is not None:
        data = view.read(leaf_path(leaf_id))
        if data is None:
            return {}
        leaf = parse_leaf(data, leaf_path(leaf_id))
        if leaf.kind != "scout":
            return {}
        check_write_set(patch, leaf.may_write)
    elif attempt.actor.type != "human":
        return {}
    return fetch_new_sources(patch, project, fetcher)


def ingest_trace(home: Home, attempt: Attempt, now: datetime) -> None:
    """the trace bundle checked (optional for a person's edit); a secret in it refuses the attempt
    and revokes any bearer token of ours it holds."""
    submission = attempt.submission
    if submission.bundle_problem is not None:
        raise Rejected(submission.bundle_problem)
    if submission.bundle or submission.leaf_id is not None:
        try:
            attempt.trace = inspect_bundle(submission.bundle, submission.patch)
        except Rejected as exc:
            raise revoke_on_trace_secret(home.identities, exc, submission.bundle, now) from None
        _check_assertions(attempt.actor, attempt.trace, submission.leaf_id)


def store_trace(home: Home, attempt: Attempt) -> None:
    """the checked bundle kept, content-addressed, once the patch has passed the secret gate."""
    if attempt.trace is None:
        return
    try:
        attempt.trace_stored = home.traces.put(attempt.trace, attempt.submission.bundle)
    except ConflictError as exc:
        raise _reject("trace_collision", str(exc), "trace/") from exc


def accept(home: Home, writer: ProjectWriter, attempt: Attempt, patch: ParsedPatch,
           fetches: dict[str, FetchOutcome], now: datetime) -> Verdict:
    """Steps 4-9 under the writer: lands the contribution, or raises Rejected having landed nothing."""
    base = leaf_and_base(writer, attempt, now)  # 4
    writes = write_set(writer, attempt, patch, base)  # 5
    result = kind_check(home, writer, attempt, writes, fetches, now)  # 6
    routed, holds = route_holds(writer, attempt, writes, result)  # 7
    score_writes = rescore(writer, attempt, routed)  # 8
    return land_accepted(writer, attempt, routed, holds, score_writes, result, now)  # 9


def submit(home: Home, submission: Submission, *, now: datetime, fetcher: Fetcher) -> Verdict:
    """Run one submission through the pipeline and return its verdict (see module docstring)."""
    actor = home.identities.authenticate(submission.token)  # 1; AuthError propagates, nothing is written
    ProjectWriter.refuse_if_broken(home, submission.slug)  # a project whose history is broken takes nothing
    attempt = Attempt(actor, submission)
    early: Exception | None = None
    patch: ParsedPatch | None = None
    fetches: dict[str, FetchOutcome] = {}
    try:
        ingest_trace(home, attempt, now)  # 2
        patch = parse_patch(submission.patch)  # 3
        gate_patch(home.identities, submission.patch, patch, now)  # what lands is scanned before anything is kept
        store_trace(home, attempt)
        fetches = fetches_for(home, attempt, patch, fetcher)
    except Exception as exc:  # a rejection, or a crash: either way it ends as one ledger row below
        early = exc
    with ProjectWriter.open(home, submission.slug) as writer:  # the project's lock, to the end
        try:
            if early is not None:
                raise early
            assert patch is not None
            return accept(home, writer, attempt, patch, fetches, now)  # 4-9
        except Rejected as exc:
            return land_refusal(writer, attempt, exc, now, patch, fetches)
        except (HistoryBrokenError, RetryableError):
            raise  # the project refuses writes, or the machine failed: no row can be written
        except Exception as exc:
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            landed = writer.land(attempt.entry(now, "crash", description=f"verifier crash: {detail}"))
            return _verdict(attempt, "crash", landed, [Rejection("crash", f"verifier crash: {detail}")], summary="")


def land_refusal(writer: ProjectWriter, attempt: Attempt, exc: Rejected, now: datetime,
                 patch: ParsedPatch | None = None, fetches: dict[str, FetchOutcome] | None = None) -> Verdict:
    """The one ledger row of a refused attempt (with the record of any source whose URL did not
    resolve, so nobody scouts it blind again); the bundle it stored moves to the agent's bounded
    quarantine."""
    if attempt.trace is not None and attempt.trace_stored:
        writer.home.traces.quarantine(attempt.trace.trace_id, attempt.actor.handle)
    failed = failed_source_contribution(writer.repo, attempt.actor, attempt.trace, attempt.submission.leaf_id,
                                        patch, fetches or {}, exc.rejections)
    landed = writer.land(attempt.entry(now, "rejected", reason=exc.headline), contribution=failed)
    return _verdict(attempt, "rejected", landed, exc.rejections, summary="")


def _verdict(attempt: Attempt, outcome: Outcome, landed: Landed, rejections: list[Rejection], *,
             summary: str, holds: list[str] | None = None, notes: list[str] | None = None) -> Verdict:
    return Verdict(
        outcome=outcome, project=attempt.submission.slug, leaf_id=attempt.submission.leaf_id,
        actor=attempt.actor.handle, summary=summary, rejections=rejections, commit=landed.commit,
        ledger_seq=landed.row.seq, trace_id=attempt.trace.trace_id if attempt.trace else None,
        tip=landed.tip, holds=holds or [], notes=notes or [],
    )
