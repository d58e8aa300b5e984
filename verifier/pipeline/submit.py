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
    [the attempt joins the project's group (pipeline.group: what reached the project while it was
     landing); the group's writer is opened here once (lock, history check) and held to its end]
 4. leaf & base    the leaf exists, is open, unexpired, its plan not held; the submission's base
                   is the leaf's base_revision or a later commit on the branch (a person's edit:
                   any commit on the branch); if the branch has moved since, the patch lands on
                   the tip when none of its paths changed, else it is stale, never merged.
                   A person's edit is held to the authority rule (roles.authority) by the paths
                   it touches: PROJECT.md and hypotheses are the steward's (an admin's too). A
                   refusal raises NotAuthorised and, like a failed step 1, lands no row: it
                   goes to the home's audit log instead.
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

Steps 4 to 8 are one pure function, `judge`: it takes the tip as read once under the lock (its
tree, its history's ancestry, PROJECT.md parsed once), the frozen attempt, the parsed patch, the
fetches, the derived-text oracle and `now`, and returns the `Judgement` to land or raises
`Refused` (a rejection carrying what was known of the attempt when it arose, for the refusal's
ledger row). The shell around it reads, judges and lands: `prepare` runs steps 1-3 before any lock, `settle`
steps 4-9 of one attempt under the writer, `land_group` settles a group with one publish (ADR
0014), and `submit` is all of it for one submission.

Every attempt that passes step 1 ends as exactly one ledger row: accepted, held, rejected, or
crash when something unexpected broke (and then nothing else of the attempt is kept).
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property
from typing import Protocol

from verifier.checks.amend import amendment_writes
from verifier.checks.context import CheckContext, CheckResult
from verifier.checks.registry import check_for
from verifier.errors import (
    AuthError,
    ConflictError,
    FormatError,
    HistoryBrokenError,
    NotAuthorised,
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
from verifier.formats.project import ProjectFile, parse_project
from verifier.formats.trace import TraceRecord
from verifier.patch.parse import ParsedPatch, parse_patch
from verifier.pipeline.failed_sources import failed_source_contribution
from verifier.pipeline.group import GroupCommit
from verifier.pipeline.inputs import TextOf, fetch_new_sources, source_texts
from verifier.pipeline.landing import Contribution, Landed
from verifier.pipeline.patching import apply_to, changed_since, check_write_set
from verifier.pipeline.routing import count_objects, object_ids, route
from verifier.pipeline.scores import apply_writes
from verifier.pipeline.secrets_gate import gate_patch, revoke_on_trace_secret
from verifier.pipeline.trace import check_asked_level, inspect_bundle
from verifier.pipeline.verdict import Outcome, Submission, Verdict
from verifier.pipeline.writer import ProjectWriter
from verifier.roles.authority import Authority, edit_actions, first_refusal
from verifier.scoring.use import ScoreBook
from verifier.state.contracts import contract_in
from verifier.state.layout import PROJECT_FILE, QUEUE_DIR, leaf_path, leaf_result_path, plan_path, queue_path
from verifier.state.view import Overlay, TreeView
from verifier.store.audit import record_denial
from verifier.store.fetcher import Fetcher
from verifier.store.gitrepo import Person, agent_email, landing_handle
from verifier.store.home import Home
from verifier.store.identities import Actor, require

# the pipeline's public face
__all__ = ["HUMAN_EDIT", "Landings", "Outcome", "Submission", "Verdict", "judge", "submit"]

HUMAN_EDIT = "human-edit"  # the leaf_id a person's optional trace names for an edit outside leaves
HUMAN_RULES = [WriteRule(op="write", path="**")]  # people may write anything but verifier-only paths
Writes = Mapping[str, bytes | None]


@dataclass(frozen=True)
class Attempt:
    """Who submits what: the actor (step 1), the submission, and its checked trace (step 2)."""

    actor: Actor
    submission: Submission
    trace: TraceRecord | None = None
    # A pushed commit keeps its own author, subject and body (git's door, writes.push).
    author: Person | None = None
    subject: str = ""
    body: str = ""

    def entry(self, now: datetime, outcome: Outcome, *, leaf: LeafContract | None, base: str | None,
              reason: Rejection | None = None, description: str = "",
              objects: list[str] | None = None) -> SubmitEntry:
        """The attempt's ledger row, with the leaf and the base as far as they were known."""
        manifest = self.trace.manifest if self.trace else None
        return SubmitEntry(
            at=now, action="submit" if self.submission.leaf_id else "human", outcome=outcome,
            reason_code=reason.code if reason else None,
            description=(reason.render() if reason else description)[:4000],
            leaf_id=self.submission.leaf_id,
            kind=leaf.kind if leaf else (None if self.submission.leaf_id else "human"),
            actor=self.actor.handle, actor_type=self.actor.type, operator=self.actor.operator,
            base_revision=base, trace_id=self.trace.trace_id if self.trace else None,
            cost=Cost(tokens=manifest.tokens if manifest else None, usd=manifest.usd if manifest else None,
                      duration_s=manifest.duration_s if manifest else None),
            model=manifest.model if manifest else None,
            skill_version=manifest.skill_version if manifest else None,
            objects=objects,
            claimed_at=self.submission.claimed_at if self.submission.leaf_id else None,
        )


class History(Protocol):
    """The ancestry questions the judge asks of the project's history (a ProjectRepo answers them)."""

    def has_object(self, oid: str) -> bool: ...

    def is_ancestor(self, ancestor: str, descendant: str) -> bool: ...

    def view(self, rev: str | None) -> TreeView: ...

    def resolve(self, rev: str) -> str: ...


@dataclass(frozen=True)
class Tip:
    """The state an attempt is judged against: the writer's tip, read once under the lock."""

    commit: str
    view: TreeView
    history: History
    admins: tuple[str, ...] = ()  # the home's admins (config.json), for the authority rule
    # What a handle is in the identity registry ("human", "agent", or None: nobody); None: not
    # asked. A person's edit naming a steward or maintainer who is not a person is said in a note
    # (verifier.checks.human).
    handles: Callable[[str], str | None] | None = None

    @cached_property
    def project(self) -> ProjectFile:
        """PROJECT.md, parsed once (on first use: a leaf refused at step 4 never needs it)."""
        project, _ = parse_project(self.view.read(PROJECT_FILE) or b"", PROJECT_FILE)
        return project


@dataclass(frozen=True)
class Judgement:
    """What to land (step 9): the routed writes, what was held, the scores, and the check's words."""

    leaf: LeafContract | None
    base: str
    outcome: Outcome
    writes: Writes
    holds: tuple[str, ...]
    score_writes: Writes
    summary: str
    notes: tuple[str, ...]


class Refused(Rejected):
    """The judge's rejection, with the leaf and the base as far as they were known when it arose."""

    def __init__(self, rejected: Rejected, leaf: LeafContract | None, base: str | None) -> None:
        super().__init__(rejected.rejections)
        self.leaf = leaf
        self.base = base


def _reject(code: str, message: str, where: str | None = None) -> Rejected:
    return Rejected(Rejection(code, message, where))


def _load_leaf(view: TreeView, leaf_id: str) -> LeafContract:
    contract = contract_in(view, leaf_id)  # parsed once per blob (the board and the digest read it too)
    if contract is None:
        raise _reject("unknown_leaf", f"there is no leaf {leaf_id} in this project", leaf_path(leaf_id))
    return contract


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


def _resolve_base(history: History, leaf: LeafContract, base: str, tip: str) -> None:
    rebase = f"the current revision is {tip}; rebase your patch onto it and resubmit with that base_revision"
    if not history.has_object(base):
        raise _reject("wrong_base", f"base_revision {base} is not in this project; {rebase}")
    if not history.is_ancestor(leaf.base_revision, base) or not history.is_ancestor(base, tip):
        raise _reject(
            "wrong_base",
            f"the patch is against {base}, but leaf {leaf.leaf_id} is pinned to {leaf.base_revision} "
            f"(a later revision on the branch is fine); {rebase}",
        )


def _check_open(view: TreeView, leaf: LeafContract, now: datetime) -> None:
    """The leaf is open, unexpired, and its plan is not held."""
    result_data = view.read(leaf_result_path(leaf.leaf_id))
    if result_data is not None:
        done = parse_leaf_result(result_data, leaf_result_path(leaf.leaf_id))
        raise _reject("leaf_closed", f"leaf {leaf.leaf_id} was already {done.outcome} at commit {done.commit}")
    if now >= leaf.expires_at:
        raise _reject("leaf_expired", f"leaf {leaf.leaf_id} expired at {iso(leaf.expires_at)}")
    if leaf.plan_id and view.read(plan_path(leaf.plan_id)) is None and view.read(
            queue_path("plans", plan_path(leaf.plan_id))) is not None:
        raise _reject("plan_held", f"plan {leaf.plan_id} is held in queue/plans awaiting approval")


def _human_base(tip: Tip, attempt: Attempt) -> str:
    if attempt.actor.type != "human":
        raise _reject("leaf_required", "agents submit against a leaf (--leaf); only people edit outside leaves")
    wanted = attempt.submission.base or tip.commit
    try:
        base = tip.history.resolve(wanted)  # a branch name or short id becomes the full commit id
    except NotFound:
        raise _reject("wrong_base", f"base {wanted[:64]!r} names no commit; the current revision is "
                                    f"{tip.commit}") from None
    if not tip.history.is_ancestor(base, tip.commit):
        raise _reject("wrong_base", f"base {base} is not on the branch; the current revision is {tip.commit}")
    return base


def write_set(tip: Tip, leaf: LeafContract | None, patch: ParsedPatch, base: str) -> dict[str, bytes | None]:
    """every change allowed, nothing stale, and the patch applied exactly to the tip."""
    check_write_set(patch, HUMAN_RULES if leaf is None else leaf.may_write, human=leaf is None)
    if base != tip.commit:
        moved = changed_since(tip.history.view(base), tip.view, patch.touched())
        if moved:
            raise _reject(
                "stale",
                f"{', '.join(moved[:5])} changed since your base {base[:12]}; the current revision is {tip.commit}: "
                "make the change again on it (a person: rebase onto it; an agent: take another leaf, `rw work`), "
                "patches are never merged",
            )
    return apply_to(tip.view, patch)


def kind_check(tip: Tip, attempt: Attempt, leaf: LeafContract | None, writes: Writes,
               fetches: Mapping[str, FetchOutcome], text_of: TextOf, now: datetime) -> CheckResult:
    """the leaf kind's deterministic check (a person's edit: every file to its format)."""
    overlay = Overlay(tip.view, writes)
    context = CheckContext(
        leaf=leaf, actor=attempt.actor.handle, project=tip.project, tree=overlay, writes=writes, now=now,
        source_texts=source_texts(text_of, overlay, leaf, writes), fetches=fetches,
        base_tree=tip.view, actor_type=attempt.actor.type, handle_kind=tip.handles,
    )
    result = check_for(leaf.kind if leaf is not None else "human")(context)
    if not result.accepted:
        raise Rejected(result.rejections)
    return result


def route_holds(tip: Tip, leaf: LeafContract | None, writes: dict[str, bytes | None],
                result: CheckResult) -> tuple[dict[str, bytes | None], list[str]]:
    """objects of a held type go to queue/<type>/; people's edits are not held."""
    if leaf is None:
        return writes, []  # people's edits are their own judgement: holds gate what agents bring in
    routed, holds = route(writes, tip.project.holds, result.hold_paths)
    queued = [path for path, data in routed.items() if data is not None and path.startswith(f"{QUEUE_DIR}/")
              and tip.view.read(path) is not None]
    if queued:
        # Never overwrite what already waits for a person: the first submission keeps its place.
        raise _reject("duplicate_id", f"{queued[0]} is already held in the queue, waiting for a person", queued[0])
    routed.update(amendment_writes(tip.view, routed))  # an accepted amend review rewrites its object
    return routed, holds


def rescore(tip: Tip, attempt: Attempt, leaf: LeafContract | None, routed: Writes) -> dict[str, bytes | None]:
    """the use scores take the landing's writes."""
    book = ScoreBook(tip.view.read)
    objects = apply_writes(book, tip.view, routed, attempt.actor.operator)
    if leaf is not None:
        manifest = attempt.trace.manifest if attempt.trace is not None else None
        book.record_submission(attempt.actor.operator, objects=objects or count_objects(routed),
                               tokens=manifest.tokens if manifest else None, usd=manifest.usd if manifest else None)
    return book.writes()


def judge(tip: Tip, attempt: Attempt, patch: ParsedPatch, fetches: Mapping[str, FetchOutcome], text_of: TextOf,
          now: datetime) -> Judgement:
    """Steps 4 to 8, pure: what to land, or `Refused` naming the first step that refused."""
    leaf: LeafContract | None = None
    base: str | None = None
    try:
        if attempt.submission.leaf_id is None:  # 4: a person's edit: any commit on the branch
            base = _human_base(tip, attempt)
            refusal = first_refusal(Authority.of(tip.project, tip.admins), attempt.actor,
                                    edit_actions(patch.touched()), now)
            if refusal is not None:
                raise refusal.error()
        else:  # 4: the leaf is open and the base is on its line
            leaf = _load_leaf(tip.view, attempt.submission.leaf_id)
            _check_open(tip.view, leaf, now)
            assert attempt.trace is not None
            check_asked_level(leaf, attempt.trace)
            base = attempt.trace.manifest.base_revision
            _resolve_base(tip.history, leaf, base, tip.commit)
        writes = write_set(tip, leaf, patch, base)  # 5
        result = kind_check(tip, attempt, leaf, writes, fetches, text_of, now)  # 6
        routed, holds = route_holds(tip, leaf, writes, result)  # 7
        score_writes = rescore(tip, attempt, leaf, routed)  # 8
    except Rejected as exc:
        raise Refused(exc, leaf, base) from None
    return Judgement(leaf=leaf, base=base, outcome="held" if holds else "accepted", writes=routed,
                     holds=tuple(holds), score_writes=score_writes, summary=result.summary,
                     notes=tuple(result.notes))


def read_tip(writer: ProjectWriter) -> Tip:
    """The writer's tip as the judge reads it."""
    assert writer.tip is not None  # the history check refuses a project without commits
    identities = writer.home.identities

    def handle_kind(handle: str) -> str | None:
        actor = identities.get(handle)
        return actor.type if actor is not None else None

    return Tip(writer.tip, writer.view(), writer.repo, tuple(writer.home.settings.admins), handle_kind)


def land_accepted(writer: ProjectWriter, attempt: Attempt, judged: Judgement, now: datetime) -> Verdict:
    """9: contribution commit, ledger row, scores and leaf result, branch move and anchor."""
    leaf, trace, actor, holds = judged.leaf, attempt.trace, attempt.actor, list(judged.holds)
    kind = leaf.kind if leaf is not None else "edit"
    trailers = {"Operator": actor.operator}
    if leaf is not None:
        trailers["Leaf"] = leaf.leaf_id
    if trace is not None:
        trailers["Trace"] = trace.trace_id
    contribution = Contribution(
        writes=judged.writes, author=attempt.author or Person(actor.handle, agent_email(actor.handle)),
        subject=attempt.subject or f"{kind}: {judged.summary}" + (f" (held: {', '.join(holds)})" if holds else ""),
        # The manifest's summary is part of the private trace: it never goes into the public history.
        body=attempt.body, trailers=trailers,
    )

    def bookkeeping(commit: str | None) -> dict[str, bytes | None]:
        files: dict[str, bytes | None] = dict(judged.score_writes)
        if leaf is not None:
            files[leaf_result_path(leaf.leaf_id)] = LeafResult(
                leaf_id=leaf.leaf_id, outcome=judged.outcome, commit=commit, actor=actor.handle,
                operator=actor.operator, trace_id=trace.trace_id if trace else None, at=now).dump()
        return files

    description = judged.summary + ("; " + "; ".join(judged.notes) if judged.notes else "")
    entry = attempt.entry(now, judged.outcome, leaf=leaf, base=judged.base, description=description,
                          objects=object_ids(judged.writes) if leaf is not None else None)
    landed = writer.land(entry, contribution=contribution, bookkeeping_of=bookkeeping)
    return _verdict(attempt, judged.outcome, landed, [], summary=judged.summary, holds=holds,
                    notes=list(judged.notes))


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


def ingest_trace(home: Home, attempt: Attempt, now: datetime) -> Attempt:
    """the trace bundle checked (optional for a person's edit); a secret in it refuses the attempt
    and revokes any bearer token of ours it holds. The attempt is returned with its trace."""
    submission = attempt.submission
    if submission.bundle_problem is not None:
        raise Rejected(submission.bundle_problem)
    if not submission.bundle and submission.leaf_id is None:
        return attempt
    try:
        trace = inspect_bundle(submission.bundle, submission.patch)
    except Rejected as exc:
        raise revoke_on_trace_secret(home.identities, exc, submission.bundle, now) from None
    return replace(attempt, trace=trace)


def check_claims(attempt: Attempt) -> None:
    """what the trace's manifest says of its agent and leaf is what the token and the submission say."""
    if attempt.trace is not None:
        _check_assertions(attempt.actor, attempt.trace, attempt.submission.leaf_id)


def store_trace(home: Home, attempt: Attempt) -> bool:
    """the checked bundle kept, content-addressed, once the patch has passed the secret gate; True
    when this attempt stored it (so a refusal quarantines it)."""
    if attempt.trace is None:
        return False
    try:
        return home.traces.put(attempt.trace, attempt.submission.bundle)
    except ConflictError as exc:
        raise _reject("trace_collision", str(exc), "trace/") from exc


def accept(home: Home, writer: ProjectWriter, attempt: Attempt, patch: ParsedPatch,
           fetches: Mapping[str, FetchOutcome], now: datetime) -> Verdict:
    """Steps 4-9 under the writer: lands the contribution, or raises Refused having landed nothing."""
    judged = judge(read_tip(writer), attempt, patch, fetches, home.source_text, now)  # 4-8
    return land_accepted(writer, attempt, judged, now)  # 9


@dataclass(frozen=True)
class Ready:
    """An attempt through steps 1-3, waiting for the project's writer: what it brought, and the
    rejection (or crash) that already ends it, if any (it still lands its one ledger row)."""

    attempt: Attempt
    now: datetime
    patch: ParsedPatch | None = None
    fetches: Mapping[str, FetchOutcome] = field(default_factory=dict)
    stored: bool = False  # this attempt stored its trace bundle (a refusal quarantines it)
    early: Exception | None = None


def prepare(home: Home, submission: Submission, *, now: datetime, fetcher: Fetcher) -> Ready:
    """Steps 1-3, before any lock: authenticate (AuthError writes nothing), then the trace, the
    patch and its secret gate, the stored bundle and the URL check of new sources."""
    who = "unknown"
    try:
        actor = home.identities.authenticate(submission.token)  # 1; AuthError propagates, nothing is written
        who = actor.handle
        # The token's scope: a person's for a person's edit outside any leaf, else leaf work (an agent's
        # edit outside a leaf goes on to its own rejection, leaf_required).
        person_edit = submission.leaf_id is None and actor.type == "human"
        require(actor, "steward" if person_edit else "leaf", submission.slug)
    except AuthError as exc:  # ScopeError too: a good token not made for this (then `who` is known)
        record_denial(home, kind="authentication", who=who, action="submit", project=submission.slug,
                      why=f"[{exc.code}] {exc}", at=now, door=submission.door)
        raise
    ProjectWriter.refuse_if_broken(home, submission.slug)  # a project whose history is broken takes nothing
    attempt = Attempt(actor, submission)
    patch: ParsedPatch | None = None
    stored = False
    try:
        attempt = ingest_trace(home, attempt, now)  # 2
        check_claims(attempt)
        patch = parse_patch(submission.patch)  # 3
        gate_patch(home.identities, submission.patch, patch, now)  # what lands is scanned before anything is kept
        stored = store_trace(home, attempt)
        fetches = fetches_for(home, attempt, patch, fetcher)
    except Exception as exc:  # a rejection, or a crash: either way it ends as one ledger row under the writer
        return Ready(attempt, now, patch, {}, stored, exc)
    return Ready(attempt, now, patch, fetches, stored)


def settle(writer: ProjectWriter, ready: Ready) -> Verdict:
    """Steps 4-9 of a prepared attempt under the project's writer: its one ledger row, whatever
    the outcome. Raises NotAuthorised (no row: the audit log keeps it), and HistoryBrokenError or
    RetryableError when no row can be written."""
    home, attempt, now, patch = writer.home, ready.attempt, ready.now, ready.patch
    try:
        if ready.early is not None:
            raise ready.early
        assert patch is not None
        return accept(home, writer, attempt, patch, ready.fetches, now)  # 4-9
    except Rejected as exc:
        return land_refusal(writer, attempt, exc, now, patch, ready.fetches, trace_stored=ready.stored)
    except NotAuthorised as exc:  # a stranger cannot fill the ledger
        record_denial(home, kind="authority", who=exc.who, action=exc.action, project=writer.slug,
                      why=str(exc), at=now, door=attempt.submission.door)
        raise
    except (HistoryBrokenError, RetryableError):
        raise  # the project refuses writes, or the machine failed: no row can be written
    except Exception as exc:
        return land_crash(writer, attempt, now, exc)


def land_crash(writer: ProjectWriter, attempt: Attempt, now: datetime, exc: Exception) -> Verdict:
    """The one ledger row of an attempt something unexpected broke (nothing else of it is kept)."""
    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    landed = writer.land(attempt.entry(now, "crash", leaf=_leaf_as_known(writer, attempt), base=None,
                                       description=f"verifier crash: {detail}"))
    return _verdict(attempt, "crash", landed, [Rejection("crash", f"verifier crash: {detail}")], summary="")


def land_group(home: Home, slug: str, group: Sequence[Ready]) -> list[Verdict | BaseException]:
    """Settle prepared attempts of one project together: one writer opening and history check,
    each attempt judged against the tip the ones before it left and landed as its own
    contribution and ledger row, in order, then one publish (one branch move, one anchor) for all.

    An attempt's own refusal (NotAuthorised) is its answer and does not hold back the others; a
    failure no row can record (the history broken, the lock busy, a full disk) raises, and then
    nothing of the group was published. Anything else that breaks the group's publish ends each
    attempt that had a row as a crash row instead, landed as a group of their own."""
    answers: list[Verdict | BaseException] = []
    with ProjectWriter.open(home, slug) as writer:
        try:
            with writer.batch(carry=len(group) > 1):
                for ready in group:
                    try:
                        answers.append(settle(writer, ready))
                    except NotAuthorised as exc:
                        answers.append(exc)
        except (HistoryBrokenError, RetryableError):
            raise
        except Exception as exc:  # the publish broke after every attempt was judged: nothing of it is kept
            kept = answers + [None] * (len(group) - len(answers))  # an attempt's own refusal stays its answer
            with writer.batch(carry=len(group) > 1):
                answers = [answer if isinstance(answer, BaseException) else land_crash(writer, ready.attempt,
                                                                                       ready.now, exc)
                           for ready, answer in zip(group, kept, strict=True)]
    return _amended(answers, writer.amended)


def _amended(answers: list[Verdict | BaseException], amended: tuple[str, str] | None) -> list[Verdict | BaseException]:
    """The group's last ledger commit was made again with the group's bookkeeping: its verdict
    names the commit that was published."""
    if amended is None:
        return answers
    made, again = amended
    return [replace(answer, tip=again) if isinstance(answer, Verdict) and answer.tip == made else answer
            for answer in answers]


Landings = GroupCommit[Ready, Verdict]


def submit(home: Home, submission: Submission, *, now: datetime, fetcher: Fetcher,
           landings: Landings | None = None) -> Verdict:
    """Run one submission through the pipeline and return its verdict (see module docstring).

    With `landings` (the service's: one per process), the attempt lands in a group with whatever
    else reached the project meanwhile (pipeline.group); without, in a group of its own."""
    ready = prepare(home, submission, now=now, fetcher=fetcher)  # 1-3
    slug = submission.slug

    def together(group: Sequence[Ready]) -> list[Verdict | BaseException]:
        with landing_handle(home.repo_path(slug)):  # handed from leader to leader, its caches warm
            return land_group(home, slug, group)

    if landings is not None:
        return landings.land(str(home.repo_path(slug)), ready, together)
    (answer,) = together([ready])
    if isinstance(answer, BaseException):
        raise answer
    return answer


def land_refusal(writer: ProjectWriter, attempt: Attempt, exc: Rejected, now: datetime,
                 patch: ParsedPatch | None = None, fetches: Mapping[str, FetchOutcome] | None = None, *,
                 trace_stored: bool = False) -> Verdict:
    """The one ledger row of a refused attempt (with the record of any source whose URL did not
    resolve, so nobody scouts it blind again); the bundle it stored moves to the agent's bounded
    quarantine."""
    if attempt.trace is not None and trace_stored:
        writer.home.traces.quarantine(attempt.trace.trace_id, attempt.actor.handle)
    failed = failed_source_contribution(writer.repo, attempt.actor, attempt.trace, attempt.submission.leaf_id,
                                        patch, dict(fetches or {}), exc.rejections)
    leaf, base = (exc.leaf, exc.base) if isinstance(exc, Refused) else (_leaf_as_known(writer, attempt), None)
    landed = writer.land(attempt.entry(now, "rejected", leaf=leaf, base=base, reason=exc.headline),
                         contribution=failed)
    return _verdict(attempt, "rejected", landed, exc.rejections, summary="")


def _leaf_as_known(writer: ProjectWriter, attempt: Attempt) -> LeafContract | None:
    """The attempt's leaf as the tip holds it, for its row's kind when the refusal came before
    step 4 read it (a bad trace, patch or secret): the evaluation counts the attempt under its
    kind. None for a person's edit, or a leaf the tip has not, or cannot read."""
    leaf_id = attempt.submission.leaf_id
    if leaf_id is None:
        return None
    try:
        return contract_in(writer.view(), leaf_id)
    except Exception:  # the kind is a nicety: nothing may keep the attempt's one row from landing
        return None


def _verdict(attempt: Attempt, outcome: Outcome, landed: Landed, rejections: list[Rejection], *,
             summary: str, holds: list[str] | None = None, notes: list[str] | None = None) -> Verdict:
    return Verdict(
        outcome=outcome, project=attempt.submission.slug, leaf_id=attempt.submission.leaf_id,
        actor=attempt.actor.handle, summary=summary, rejections=rejections, commit=landed.commit,
        ledger_seq=landed.row.seq, trace_id=attempt.trace.trace_id if attempt.trace else None,
        tip=landed.tip, holds=holds or [], notes=notes or [],
    )
