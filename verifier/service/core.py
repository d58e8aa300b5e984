"""What each endpoint does, as plain synchronous calls (the routes run them in worker threads).

The service adds to the pipeline only what a network needs: the journal (so a killed process
loses no attempt and a retried request does not submit twice), the claims of the task board, and
telling Commons after every verdict: the claim at once, the messages by the notifier's pass in
the background after the answer (verifier.service.notifying; a message read here waits for the
passes of the verdicts answered before it). The verdict itself is `verifier.pipeline.submit.submit`.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from pydantic import ValidationError

from verifier.checks.review import author_of
from verifier.commons.adapter import Claim, ClaimConflict, Message, OutgoingMessage
from verifier.commons.backend import commons_database
from verifier.commons.local import LocalCommons
from verifier.constants import GROUP_MAX, NOTIFY_READ_WAIT_S, RETRY_SOON_S
from verifier.deploy.instances import fresh_for_reading
from verifier.deploy.pipelined import PipelinedLandings
from verifier.errors import (
    AuthError,
    ConflictError,
    FormatError,
    HistoryBrokenError,
    LedgerIntegrityError,
    NotFound,
    RetryableError,
)
from verifier.formats.base import SLUG_RE, iso
from verifier.formats.ids import trace_id_for
from verifier.formats.leaf import LeafContract
from verifier.formats.ledger import row_line
from verifier.formats.strictjson import loads as strict_loads
from verifier.formats.trace import bundle_digest
from verifier.messages.notifier import Notifier
from verifier.pipeline.digest import Digest, digest
from verifier.pipeline.group import GroupCommit
from verifier.pipeline.submit import HUMAN_EDIT, Landings, Submission, submit
from verifier.pipeline.writer import CrashPoint, ProjectWriter, no_crash
from verifier.service import people
from verifier.service.config import Runtime, ServiceConfig
from verifier.service.errors import ApiError
from verifier.service.journal import Journal, Record, Started
from verifier.service.notifying import NotifyQueue
from verifier.service.recovery import settle
from verifier.service.schemas import ClaimRequest, ThreadPost
from verifier.service.screening import refuse_secret_message
from verifier.state.project import rows_from
from verifier.store.gitrepo import GitTree, ProjectRepo
from verifier.store.home import Home
from verifier.store.identities import Actor
from verifier.ui.board import BoardLeaf, board, leaf_state, readable_contract

log = logging.getLogger("rw.service")
LEAF_ID_RE = re.compile(r"^[a-z0-9][a-z0-9-]{2,63}$")
SUBMISSION_ID_RE = re.compile(r"^sub_[0-9a-f]{24}$")
IDEMPOTENCY_KEY_RE = re.compile(r"^[A-Za-z0-9_.:-]{8,128}$")


def clock() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def invalid_body(exc: ValidationError) -> ApiError:
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "(body)"
    message = "unknown field" if first["type"] == "extra_forbidden" else first["msg"]
    return ApiError(422, "invalid_body", f"field {field}: {message}")


def own_review(view: GitTree, contract: LeafContract, handle: str) -> bool:
    """Whether `contract` is a review leaf of an object `handle`'s own leaf landed."""
    path = contract.inputs.object_path
    return contract.kind == "review" and path is not None and author_of(view, path) == handle


def message_json(message: Message) -> dict[str, Any]:
    return {"id": message.id, "kind": message.kind, "body": message.body, "project": message.project,
            "leaf_id": message.leaf_id, "to": message.to_agent, "from": message.sender, "data": message.data,
            "at": iso(message.created_at)}


def claim_json(claim: Claim) -> dict[str, Any]:
    return {"project": claim.project, "leaf_id": claim.leaf_id, "agent": claim.agent,
            "claimed_at": iso(claim.claimed_at), "expires_at": iso(claim.expires_at)}


@dataclass(frozen=True)
class Answer:
    status: int
    body: dict[str, Any]
    headers: dict[str, str]


class Service:
    """What the routes call. `crash_point` is called at the service's own steps (`journal`: the
    attempt is recorded, `respond`: the verdict is in) and handed to every project writer."""

    def __init__(self, config: ServiceConfig, *, crash_point: CrashPoint = no_crash) -> None:
        self.config = config
        self.runtime = Runtime(config)
        self.home = self.runtime.home
        self.home.crash_point = self.crash_point = crash_point
        self.db = commons_database(self.home)
        self.commons = LocalCommons(self.db, self.home.identities)
        self.journal = Journal(self.db, self.home.settings.backends.instance,
                               live_s=self.home.settings.backends.lease_s)
        self.notifier = Notifier(self.home, self.commons, self.db, digest)
        # The notifier's passes after a verdict, off the answer path (its cursor in Commons keeps what
        # a pass has not told yet, so a queue of projects loses nothing).
        self.notifying = NotifyQueue(lambda slug: self.notifier.landed(slug, clock))
        # This process's landing queues: submissions to a project that is landing wait and land together;
        # projects on a git host push each group while the next one is judged (verifier.deploy.pipelined).
        self.landings: Landings = PipelinedLandings(max_group=GROUP_MAX) if self.home.settings.backends.remotes \
            else GroupCommit(max_group=GROUP_MAX)

    # who and what ---------------------------------------------------------------------------------

    def authenticate(self, token: str) -> Actor:
        return self.commons.authenticate(token)  # an AuthError answers 401 `bad_token` (verifier.errors)

    def project(self, slug: str) -> ProjectRepo:
        if not SLUG_RE.match(slug):
            raise NotFound(f"there is no project {slug[:70]!r}", code="no_project")
        try:
            fresh_for_reading(self.home, slug)  # several instances: a cache this instance does not write
            return self.home.project(slug)
        except NotFound as exc:
            raise NotFound(f"there is no project {slug!r}", code="no_project") from exc

    def _tip_view(self, repo: ProjectRepo) -> GitTree:
        tip = repo.tip()
        if tip is None:
            raise NotFound("the project has no commits yet", code="no_project")
        return repo.view(tip)

    @staticmethod
    def check_leaf_id(leaf_id: str) -> None:
        if not LEAF_ID_RE.match(leaf_id):
            raise NotFound(f"{leaf_id[:70]!r} is not a leaf id ([a-z0-9][a-z0-9-]{{2,63}})", code="no_leaf")

    # reading ----------------------------------------------------------------------------------------

    def projects(self) -> dict[str, Any]:
        out = []
        for slug in self.home.projects():
            repo = self.home.project(slug)
            anchor = self.home.read_anchor(slug)
            out.append({"project": slug, "tip": repo.tip(), "ledger_rows": anchor.seq + 1 if anchor else None})
        return {"projects": out}

    def project_summary(self, slug: str) -> dict[str, Any]:
        repo = self.project(slug)
        view = self._tip_view(repo)
        now = clock()
        counts: dict[str, int] = {}
        for leaf in board(view, self.commons.claims(slug, now=now), now):
            counts[leaf.state] = counts.get(leaf.state, 0) + 1
        anchor = self.home.read_anchor(slug)
        return {"project": slug, "tip": repo.tip(), "ledger_rows": anchor.seq + 1 if anchor else None,
                "leaves": counts}

    def leaves(self, slug: str, state: str, viewer: Actor | None = None) -> dict[str, Any]:
        """The board; an agent asking with its token is never offered a review of its own object
        (design §5.4; the claim refuses it too)."""
        repo = self.project(slug)
        view = self._tip_view(repo)
        now = clock()
        items = board(view, self.commons.claims(slug, now=now), now)
        if viewer is not None and viewer.type != "human":
            items = [leaf for leaf in items if not own_review(view, leaf.contract, viewer.handle)]
        return {"project": slug, "tip": repo.tip(), "at": iso(now),
                "leaves": [leaf.to_json() for leaf in items if state in ("all", leaf.state)]}

    def leaf(self, slug: str, leaf_id: str) -> dict[str, Any]:
        self.check_leaf_id(leaf_id)
        repo = self.project(slug)
        view = self._tip_view(repo)
        contract = readable_contract(view, leaf_id)
        if contract is None:
            raise NotFound(f"there is no leaf {leaf_id} in {slug}", code="no_leaf")
        now = clock()
        claim = self.commons.claims(slug, now=now).get(leaf_id)
        state = leaf_state(view, contract, claim, now)
        return {"project": slug, **BoardLeaf(contract, state, claim).to_json(),
                "contract": contract.model_dump(mode="json", exclude_none=True)}

    def ledger(self, slug: str, after: int, limit: int) -> dict[str, Any]:
        repo = self.project(slug)
        view = self._tip_view(repo)
        try:
            rows = rows_from(view, after + 1, limit)
        except (FormatError, LedgerIntegrityError) as exc:
            raise LedgerIntegrityError(f"the ledger cannot be read: {exc}") from exc
        return {"project": slug, "rows": [json.loads(row_line(row)) for row in rows]}

    def digest(self, slug: str) -> Digest:
        self.project(slug)
        return digest(self.home, slug, clock())

    def thread(self, slug: str, leaf_id: str, after: int, limit: int) -> dict[str, Any]:
        self.check_leaf_id(leaf_id)
        self.project(slug)
        self._told([slug])
        return {"messages": [message_json(m) for m in self.commons.thread(slug, leaf_id, after=after, limit=limit)]}

    def _told(self, slugs: list[str] | None) -> None:
        """Read your writes before a message read: the passes this process queued for the verdicts
        it answered (at most NOTIFY_READ_WAIT_S), then a pass of each project (`slugs`, None: every
        one) whose tip is still past the notifier's cursor, as another worker process of this home
        may have answered its verdict a moment ago and not told Commons yet."""
        self.notifying.wait(NOTIFY_READ_WAIT_S)
        try:
            for slug in self.notifier.behind() if slugs is None else slugs:
                self.notifier.catch_up_checked(slug, now=clock())
        except Exception:  # logged; the read answers with what is posted, the next pass tells the rest
            log.exception("catching up before a message read failed")

    def inbox(self, actor: Actor, after: int, limit: int) -> dict[str, Any]:
        self._told(None)
        messages = self.commons.inbox(actor.handle, after=after, limit=limit)
        return {"agent": actor.handle, "messages": [message_json(m) for m in messages],
                "next_after": messages[-1].id if messages else after}

    def outcome(self, actor: Actor, submission_id: str) -> dict[str, Any]:
        record = self.journal.get(submission_id) if SUBMISSION_ID_RE.match(submission_id) else None
        # Another agent's submission is "not found": ids are not for probing.
        if record is None or record.agent != actor.handle:
            raise NotFound(f"you have no submission {submission_id[:40]!r}", code="no_submission")
        return record.to_json()

    # side effects -------------------------------------------------------------------------------------

    def claim(self, actor: Actor, slug: str, leaf_id: str, body: dict[str, Any]) -> Answer:
        request = _asserted_body(ClaimRequest, body, actor)
        self.check_leaf_id(leaf_id)
        view = self._tip_view(self.project(slug))
        contract = readable_contract(view, leaf_id)
        if contract is None:
            raise NotFound(f"there is no leaf {leaf_id} in {slug}", code="no_leaf")
        now = clock()
        state = leaf_state(view, contract, None, now)
        if state in ("accepted", "held", "rejected", "reverted"):
            raise ConflictError(f"leaf {leaf_id} is closed ({state})", code="leaf_closed")
        if state == "expired":
            raise ConflictError(f"leaf {leaf_id} expired at {iso(contract.expires_at)}", code="leaf_expired")
        if actor.type != "human" and own_review(view, contract, actor.handle):
            raise ConflictError(f"leaf {leaf_id} reviews {contract.inputs.object_path}, which {actor.handle}'s own "
                                "leaf landed; an agent does not review its own objects (another agent may, even of "
                                "the same operator)", code="own_object")
        ttl = request.ttl_s or self.config.claim_ttl_s
        if ttl > self.config.claim_ttl_max_s:
            raise ApiError(422, "invalid_body", f"field ttl_s: at most {self.config.claim_ttl_max_s} seconds")
        until = min(now + timedelta(seconds=ttl), contract.expires_at)
        try:
            claim = self.commons.claim(slug, leaf_id, actor.handle, until=until, now=now)
        except ClaimConflict as exc:
            raise ApiError(409, "leaf_claimed", str(exc),
                           detail={"claimed_by": exc.holder, "until": iso(exc.until)}) from exc
        return Answer(200, claim_json(claim), {})

    def release(self, actor: Actor, slug: str, leaf_id: str) -> Answer:
        self.check_leaf_id(leaf_id)
        self.project(slug)
        if not self.commons.release(slug, leaf_id, actor.handle, now=clock()):
            raise NotFound(f"you hold no live claim on {leaf_id}", code="no_claim")
        return Answer(200, {"project": slug, "leaf_id": leaf_id, "released": True}, {})

    def post(self, actor: Actor, slug: str, leaf_id: str, body: dict[str, Any]) -> Answer:
        request = _asserted_body(ThreadPost, body, actor)
        self.check_leaf_id(leaf_id)
        view = self._tip_view(self.project(slug))
        if readable_contract(view, leaf_id) is None:
            raise NotFound(f"there is no leaf {leaf_id} in {slug}", code="no_leaf")
        now = clock()

        def tell(handles: list[str]) -> None:
            body = (f"Your bearer token appeared in a message on {slug}/{leaf_id} and was revoked at once; it no "
                    "longer authenticates. Ask the project's operator for a new token.")
            self.commons.post([OutgoingMessage(f"revoked:{secrets.token_hex(12)}", "secret", body, slug, leaf_id,
                                               handle) for handle in handles], now=now)

        refuse_secret_message(self.home.identities, request.body, now, tell)
        key = "question:" + secrets.token_hex(12)
        self.commons.post([OutgoingMessage(key, "question", request.body, slug, leaf_id, None, sender=actor.handle)],
                          now=clock())
        stored = self.commons.message(key)
        assert stored is not None  # just posted under this key
        return Answer(201, message_json(stored), {})

    def submit(self, actor: Actor, token: str, slug: str, leaf_id: str, files: dict[str, bytes],
               patch: bytes | None, key: str | None) -> Answer:
        """One submission through the journal and the pipeline; the verdict, and Commons told."""
        self.check_leaf_id(leaf_id)
        self.project(slug)
        now = clock()
        claim = self.commons.claims(slug, now=now).get(leaf_id)
        if claim is not None and claim.agent != actor.handle:
            raise ApiError(409, "leaf_claimed", f"leaf {leaf_id} is claimed by {claim.agent} until "
                                                f"{iso(claim.expires_at)}",
                           detail={"claimed_by": claim.agent, "until": iso(claim.expires_at)})
        try:
            writable(self.home, slug)
        except HistoryBrokenError:
            self._history_alarm(slug)
            raise
        digest_hex = bundle_digest(files)
        started = self._begin(actor, slug, leaf_id, key, digest_hex, _manifest_base(files), now)
        record = started.record
        if not started.fresh:
            return self._replay(record, digest_hex)
        self.crash_point("journal")
        try:
            verdict = submit(self.home, Submission(slug, leaf_id, patch if patch is not None else
                                                   files.get("patch.diff", b""), files, token,
                                                   claimed_at=claim.claimed_at if claim is not None else None,
                                                   door="http"),
                             now=now, fetcher=self.runtime.fetcher, landings=self.landings)
        except (AuthError, NotFound, HistoryBrokenError, RetryableError) as exc:
            # Retryable: nothing kept, the same Idempotency-Key runs again on the retry. The answer is
            # the error's own (verifier.service.errors); a project that vanished is `no_project`.
            self.journal.finish(record.id, {"error": str(exc)}, now=clock(),
                                state="interrupted" if isinstance(exc, RetryableError) else "failed")
            if isinstance(exc, NotFound):
                raise NotFound(str(exc), code="no_project") from exc
            if isinstance(exc, HistoryBrokenError):
                self._history_alarm(slug)
            raise
        body = verdict.to_json()
        self.journal.finish(record.id, dict(body), now=clock())
        self.crash_point("respond")
        self._after_verdict(actor, slug, leaf_id, body["outcome"], claimed=claim is not None)
        return Answer(_status_of(dict(body)), {"submission_id": record.id, "verdict": body},
                      {"location": f"/submissions/{record.id}", **self._ran_here()})

    def edit(self, actor: Actor, token: str, slug: str, files: dict[str, bytes], patch: bytes, *,
             base: str | None, key: str | None) -> Answer:
        """A person's edit; with an Idempotency-Key, through the journal as a submission is: the
        key's first answer again for a retry (200, `idempotent-replayed`), 422 for the key on
        another patch, and an edit the service died under is settled at start-up (recovery)."""
        if key is None:
            body = people.edit(self.home, token, slug, patch, files, base=base, now=clock(),
                               fetcher=self.runtime.fetcher)
            return Answer(201, dict(body), {})
        digest_hex = bundle_digest({**files, "patch.diff": patch})
        started = self._begin(actor, slug, HUMAN_EDIT, key, digest_hex, base, clock())
        record = started.record
        if not started.fresh:
            answered = self._answered(record, digest_hex, "edit", "patch")
            return Answer(200, {**answered, "submission_id": record.id}, {"idempotent-replayed": "true"})
        try:
            body = dict(people.edit(self.home, token, slug, patch, files, base=base, now=clock(),
                                    fetcher=self.runtime.fetcher))
        except BaseException as exc:  # nothing landed that the key could answer: a retry runs again, or is told
            self.journal.finish(record.id, {"error": str(exc)}, now=clock(),
                                state="interrupted" if isinstance(exc, RetryableError) else "failed")
            raise
        self.journal.finish(record.id, body, now=clock())
        return Answer(201, {**body, "submission_id": record.id}, {})

    def _ran_here(self) -> dict[str, str]:
        """Several instances: which one ran the submission (a forwarded answer keeps it)."""
        instance = self.home.settings.backends.instance
        return {"x-rw-instance": instance} if instance else {}

    def _settled_if_abandoned(self, record: Record) -> bool:
        """A retry names an attempt still `running` for an instance that died (several instances on
        one journal): settle it as start-up recovery would, so the retry is answered, not stuck."""
        if record.state != "running":
            return False
        lease = timedelta(seconds=self.home.settings.backends.lease_s)
        if not self.journal.abandoned(record.id, started_before=clock() - lease):
            return False
        # A RetryableError here: another live instance took the project first, so retry there (503).
        settle(self.home, self.journal, record, clock())
        return True

    def _begin(self, actor: Actor, slug: str, leaf_id: str, key: str | None, digest_hex: str, base: str | None,
               now: datetime) -> Started:
        """The attempt's journal row, or the one its key already names (an abandoned one of a dead
        instance settled first, then answered or run again after a crash)."""
        anchor = self.home.read_anchor(slug)

        def begin() -> Started:
            return self.journal.begin(agent=actor.handle, project=slug, leaf_id=leaf_id, key=key, digest=digest_hex,
                                      trace_id=trace_id_for(digest_hex), base_revision=base,
                                      ledger_from=anchor.seq + 1 if anchor else 0, now=now)

        started = begin()
        return begin() if not started.fresh and self._settled_if_abandoned(started.record) else started

    @staticmethod
    def _answered(record: Record, digest_hex: str, what: str, sent: str) -> dict[str, Any]:
        """The first answer a key's attempt (a `what` of `sent`) reached, or why a retry gets none."""
        if record.digest != digest_hex:
            raise ApiError(422, "idempotency_key_reused", f"this Idempotency-Key was used for another {sent}; "
                                                          f"use a new key for a new {what}")
        if record.state == "running":
            raise ApiError(409, "in_progress", f"{what} {record.id} with this Idempotency-Key is still running",
                           headers={"retry-after": str(RETRY_SOON_S)})
        if record.verdict is None or record.state == "failed":
            raise ConflictError(f"{what} {record.id} did not reach a verdict; use a new key", code="failed_attempt")
        return record.verdict

    def _replay(self, record: Record, digest_hex: str) -> Answer:
        verdict = self._answered(record, digest_hex, "submission", "bundle")
        status = 200 if _status_of(verdict) == 201 else _status_of(verdict)  # 200: nothing new
        return Answer(status, {"submission_id": record.id, "verdict": verdict},
                      {"location": f"/submissions/{record.id}", "idempotent-replayed": "true", **self._ran_here()})

    def _history_alarm(self, slug: str) -> None:
        """A write refused on a broken history: the steward and maintainers are told (once per break)."""
        try:
            self.notifier.history_alarm(slug, now=clock())
        except Exception:  # logged; the refusal is the client's answer either way
            log.exception("telling %s's steward about its broken history failed", slug)

    def _after_verdict(self, actor: Actor, slug: str, leaf_id: str, outcome: str, *, claimed: bool) -> None:
        """Claims and Commons after a verdict: the claim now (when the leaf was claimed as the
        submission came in: a claim taken since is on a closed leaf, or runs out), the messages in
        the background (the notifier's pass, queued). Failures here never cost the client its answer."""
        try:
            if claimed and outcome == "crash":
                self.commons.release(slug, leaf_id, actor.handle, now=clock())  # the leaf goes back to the pool
            elif claimed and outcome in ("accepted", "held"):
                self.commons.close_leaf(slug, leaf_id)
        except Exception:  # logged; the claim runs out by itself
            log.exception("settling the claim after a verdict in %s failed", slug)
        self.notifying.ask(slug)

    def close(self, timeout_s: float) -> None:
        """Stop: the queued notifier passes run first (at most `timeout_s`; what is left, the next
        pass of any process tells), then the Commons connections close."""
        self.notifying.close(timeout_s)
        self.db.close()


def writable(home: Home, slug: str) -> None:
    """Refuse, before anything is recorded, a write to a project whose history is broken (409
    `history_broken` until `rw repair`, the error's own answer)."""
    ProjectWriter.refuse_if_broken(home, slug)


def _status_of(verdict: dict[str, Any]) -> int:
    rejections = verdict.get("rejections") or []
    if rejections and rejections[0].get("code") == "actor_mismatch":
        return 403  # an actor named in the body must be the token's agent
    return 201


def _manifest_base(files: dict[str, bytes]) -> str | None:
    try:
        value = strict_loads(files.get("manifest.json", b""))
    except ValueError:
        return None
    base = value.get("base_revision") if isinstance(value, dict) else None
    return base if isinstance(base, str) and re.fullmatch(r"[0-9a-f]{40}", base) else None


_Body = TypeVar("_Body", ClaimRequest, ThreadPost)


def _asserted_body(model: type[_Body], body: dict[str, Any], actor: Actor) -> _Body:
    """Validate a JSON body; an actor it names is an assertion that must be the token's agent."""
    try:
        request = model.model_validate(body)
    except ValidationError as exc:
        raise invalid_body(exc) from exc
    if request.agent is not None and request.agent != actor.handle:
        raise ApiError(403, "actor_mismatch", f"the body names agent {request.agent}, but the token is "
                                              f"{actor.handle}'s")
    return request
