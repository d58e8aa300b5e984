"""The Resolver (design §5.1, §7.3, §7.4, §11): verdicts at check dates, the opened baseline,
credit. `rw resolve` runs it daily; `rw verdict approve|set` are a person's decisions.

For each hypothesis that is `active` and whose check date has passed (the day after it, UTC):

 1. gather     its evidence from the tip (verifier.roles.evidence): the present links of any
               revision with their findings, and the frozen facts of the resolution record,
               including the corpus-fed verdict V_c from the evidence balance alone
 2. ask        the configured model a `resolve` request: true, false or unresolved with a
               confidence and a rationale (outside the project lock: it can take minutes). The
               answer is untrusted text: its rationale and model name pass the secret gate
               (roles.answergate); an answer that fails is refused (`secret_in_answer`, a
               rejected row naming the field and the detector, never the text), nothing of it
               lands, and a bearer token of ours in it is revoked. So is the message of a
               failed call, withheld if it fails the gate
 3. recheck    under the lock, gather again from the new tip; if the request changed (new
               evidence landed, the hypothesis was reworded), ask again (3 tries)
 4. hold?      PROJECT.md holds `verdicts`: the proposal lands at queue/verdicts/<H>.json and the
               hypothesis waits for `rw verdict approve` or `rw verdict set` (a person's token)
 5. decide     one landing, all or nothing:
               - hypotheses/<H>.md: verdict.current (and appended to verdict.history), status
                 `resolved`, or `loose` for unresolved (contribution commit, authored by the
                 verifier: a verdict changes through `rw verdict set`, never through a revert)
               - the baseline, for true/false: opened with the private key, checked against the
                 question the hypothesis asked (stale otherwise) and against every agent-visible
                 payload (leaked otherwise), committed at scores/baseline/<H>.json; the seal and
                 its request record removed. For unresolved it stays sealed
               - scores/resolutions/<H>.json (the record), scores/resolution.json (every record),
                 scores/planner.json (unresolved_count, for unresolved), and
                 scores/credit-deltas/<seq>.json: the Resolver's messages to each operator
               - a `resolve` ledger row
 6. messages   the Commons notifier posts them: it reads every landing from the ledger (exactly
               once, keyed by seq) and sends `hypothesis_moved` with the operator's credit delta.

A person's decision never reads the private key (it is the Resolver's alone): the baseline then
stays sealed, and the next `rw resolve` opens it and rescores (step 0 of every run).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import pygit2
from ruamel.yaml import YAML

from verifier.audits.leaks import OpenedBaseline, agent_visible_payloads, public_answer_hashes, search
from verifier.checks.hypotheses import revision_rule
from verifier.errors import AuthError, ConflictError, FormatError, NotFound, VerifierError
from verifier.formats.base import iso
from verifier.formats.entries import ResolveEntry
from verifier.formats.frontmatter import split_front_matter
from verifier.formats.hypothesis import Actor as VerdictActor
from verifier.formats.hypothesis import Hypothesis, Verdict, parse_hypothesis
from verifier.formats.project import parse_project
from verifier.formats.wording import count
from verifier.model.adapter import Backend, ModelError, ask
from verifier.model.schema import request_sha256
from verifier.pipeline.landing import Contribution, Landed
from verifier.pipeline.ledger import ledger_head
from verifier.pipeline.secrets_gate import revocation_note
from verifier.pipeline.writer import ProjectWriter
from verifier.roles.answergate import SECRET_IN_ANSWER, revoke_in, safe_text, screen
from verifier.roles.evidence import HistoryLookup, gather
from verifier.roles.records import (
    BaselineOutcome,
    Decider,
    ModelCall,
    Outcome,
    ResolutionRecord,
    planner_scores,
    read_record,
    read_records,
    resolution_scores,
)
from verifier.scoring.resolution import credit_deltas, deltas_document, dump_json
from verifier.seal.sealing import SealError, baseline_context, unseal
from verifier.state.layout import (
    PLANNER_SCORES,
    PROJECT_FILE,
    RESOLUTION_SCORES,
    deltas_path,
    hypothesis_path,
    opened_path,
    proposal_path,
    record_path,
    request_record_path,
)
from verifier.state.project import current_hypothesis
from verifier.state.view import Overlay
from verifier.store.audit import Door
from verifier.store.gitrepo import VERIFIER, GitTree, ProjectRepo
from verifier.store.home import Home
from verifier.store.identities import Actor
from verifier.text.visible import require_reason
from verifier.writes.authority import enforce_at
from verifier.writes.baseline import ATTEMPTS, SealState, hypotheses_in, read_seal

RESOLVER = "resolver"
RunStatus = Literal["resolved", "unresolved", "queued", "waiting", "opened", "failed", "changed"]


class ResolverError(VerifierError):
    """A resolution could not be completed (a seal that will not open, a broken record)."""


@dataclass(frozen=True)
class HypothesisRun:
    """What one run did for one hypothesis."""

    hypothesis_id: str
    status: RunStatus
    detail: str
    seq: int | None = None

    def line(self) -> str:
        return f"{self.hypothesis_id} {self.status}: {self.detail}" + (f" (ledger #{self.seq})" if self.seq else "")


@dataclass(frozen=True)
class Decision:
    outcome: Outcome
    confidence: float
    by: Decider
    reason: str | None
    code: str  # the ledger row's reason_code
    actor: str
    actor_type: Literal["resolver", "human"]
    operator: str | None


def is_due(hypothesis: Hypothesis, now: datetime) -> bool:
    """Active, and its check date is over (UTC): the criterion is about the world on that date."""
    resolution = hypothesis.resolution
    return hypothesis.status == "active" and resolution is not None and now.date() > resolution.check_date


def history_lookup(repo: ProjectRepo, tip: str) -> HistoryLookup:
    """The newest content a path had anywhere on the branch (for links withdrawn since)."""

    def lookup(path: str) -> bytes | None:
        for commit in repo.repo.walk(pygit2.Oid(hex=tip)):
            try:
                entry = commit.tree[path]
            except KeyError:
                continue
            blob = repo.repo[entry.id]
            if isinstance(blob, pygit2.Blob):
                data: bytes = blob.data
                return data
        return None

    return lookup


# --- the hypothesis file --------------------------------------------------------------------


def with_verdict(data: bytes, where: str, *, status: str, verdict: Verdict) -> bytes:
    """The hypothesis file with a new current verdict (also appended to history) and status.

    Round-trip YAML keeps the person's wording, key order and comments in the rest of the front
    matter; the body is kept byte for byte.
    """
    yaml_text, body, _ = split_front_matter(data, where)
    loader = YAML(typ="rt")
    loader.width = 4096
    loader.preserve_quotes = True
    document = loader.load(yaml_text)

    def entry() -> dict[str, Any]:  # a new object each time: a shared one would be dumped as a YAML alias
        value: dict[str, Any] = {"value": verdict.value, "confidence": verdict.confidence}
        if verdict.by is not None:
            value["by"] = {"type": verdict.by.type, "id": verdict.by.id}
        if verdict.at is not None:
            value["at"] = iso(verdict.at)
        return value

    block = document.get("verdict") or {}
    history = [*(block.get("history") or []), entry()]
    document["status"] = status
    document["verdict"] = {"current": entry(), "history": history}
    stream = io.StringIO()
    loader.dump(document, stream)
    new = f"---\n{stream.getvalue()}---\n{body}".encode()
    parsed, _ = parse_hypothesis(new, where)  # our own write is held to the format like any other
    old, _ = parse_hypothesis(data, where)
    problem = revision_rule(old, parsed, where)
    if problem is not None:
        raise ResolverError(problem.render())
    return new


# --- the baseline at resolution ---------------------------------------------------------------


def _open(home: Home, repo: ProjectRepo, view: GitTree, slug: str, record: ResolutionRecord, state: SealState,
          private_key: bytes, now: datetime) -> tuple[BaselineOutcome, dict[str, bytes | None]]:
    h = record.hypothesis_id
    try:
        baseline = unseal(private_key, state.sealed, context=baseline_context(slug, h))
    except SealError as exc:
        raise ResolverError(f"{state.path}: {exc}; keep the key its `recipient` names (docs/resolver.md)") from exc
    # The leak test runs before the seal is retired: a baseline agents could read is no control.
    payloads = agent_visible_payloads(repo, slug, now=now, logs=home.layout.logs)
    leaks = search(payloads, [OpenedBaseline(h, state.sealed, baseline)], public_answer_hashes(view))
    if leaks:
        where = ", ".join(sorted({f"{b.leak.where} ({b.leak.secret})" for b in leaks})[:5])
        outcome = BaselineOutcome(state="leaked", verdict=baseline.verdict, path=opened_path(h),
                                  note=f"found before resolution in {where}; not compared")
    elif baseline.request_sha256 != record.baseline_request_sha256:
        outcome = BaselineOutcome(state="stale", verdict=baseline.verdict, path=opened_path(h),
                                  note=f"it answered revision {baseline.revision} as worded then; the criterion "
                                       "or statement changed before resolution; not compared")
    else:
        outcome = BaselineOutcome(state="opened", verdict=baseline.verdict, path=opened_path(h))
    writes: dict[str, bytes | None] = {opened_path(h): baseline.canonical() + b"\n", state.path: None,
                                       request_record_path(h): None}
    return outcome, writes


def _baseline(home: Home, repo: ProjectRepo, view: GitTree, slug: str, record: ResolutionRecord, outcome: Outcome,
              previous: ResolutionRecord | None, private_key: bytes | None,
              now: datetime) -> tuple[BaselineOutcome, dict[str, bytes | None]]:
    state = read_seal(view, record.hypothesis_id)
    earlier = previous.baseline if previous is not None else None
    if state is None:
        if earlier is not None and earlier.state != "sealed":
            return earlier, {}  # opened at an earlier decision on the same evidence
        return BaselineOutcome(state="missing", note="no baseline was sealed for this hypothesis"), {}
    if outcome == "unresolved":
        # No lift term needs it, and opening it would anchor whoever resolves this question next.
        return BaselineOutcome(state="sealed", note="left sealed: an unresolved outcome is not compared"), {}
    if private_key is None:
        return BaselineOutcome(state="sealed", note="a person decided; the next `rw resolve` opens it"), {}
    return _open(home, repo, view, slug, record, state, private_key, now)


def _describe_baseline(outcome: BaselineOutcome) -> str:
    if outcome.state == "opened":
        return f"baseline {outcome.verdict}"
    if outcome.state in ("stale", "leaked"):
        return f"baseline {outcome.verdict} ({outcome.state}, not compared)"
    if outcome.state == "sealed":
        return "baseline still sealed"
    return "no baseline"


# --- landing a decision -----------------------------------------------------------------------


def _finalize(writer: ProjectWriter, slug: str, repo: ProjectRepo, tip: str, facts: ResolutionRecord,
              decision: Decision, *, now: datetime, private_key: bytes | None,
              previous: ResolutionRecord | None) -> Landed:
    """Land one decision (see the module docstring, step 5) through the project's writer."""
    home = writer.home
    view = repo.view(tip)
    h = facts.hypothesis_id
    path = hypothesis_path(h)
    data = view.read(path)
    if data is None:
        raise NotFound(f"hypothesis {h} does not exist in {slug}")
    verdict = Verdict(value=decision.outcome, confidence=decision.confidence,
                      by=VerdictActor(type=decision.by.type, id=decision.by.id), at=now)
    status = "loose" if decision.outcome == "unresolved" else "resolved"
    contribution_writes: dict[str, bytes | None] = {path: with_verdict(data, path, status=status, verdict=verdict)}
    if view.read(proposal_path(h)) is not None:
        contribution_writes[proposal_path(h)] = None
    baseline, bookkeeping = _baseline(home, repo, view, slug, facts, decision.outcome, previous, private_key, now)
    seq, _ = ledger_head(view)  # the contribution commit leaves the ledger as it is
    final = facts.model_copy(update={"outcome": decision.outcome, "confidence": decision.confidence,
                                     "decided_by": decision.by, "decided_at": now, "reason": decision.reason,
                                     "baseline": baseline})
    bookkeeping[record_path(h)] = final.to_json()
    if decision.outcome == "unresolved":
        bookkeeping[PLANNER_SCORES] = planner_scores(view.read(PLANNER_SCORES), hypothesis_id=h,
                                                     revision=facts.revision, at=iso(now), seq=seq,
                                                     by=decision.actor)
    records = read_records(view)
    records[h] = final
    bookkeeping[RESOLUTION_SCORES] = resolution_scores(Overlay(view, {**contribution_writes, **bookkeeping}), slug,
                                                       records)
    before = previous.scoring()[0] if previous is not None and previous.outcome is not None else None
    after, links, reviews, findings = final.scoring()
    deltas = credit_deltas(after, links, reviews, findings, before=before)
    bookkeeping[deltas_path(seq)] = dump_json({
        "version": 1, "project": slug, "seq": seq, "hypothesis_id": h, "outcome": decision.outcome,
        "previous_outcome": before.outcome if before is not None else None, "deltas": deltas_document(deltas)})
    who = decision.by.id if decision.by.type == "resolver" else f"{decision.actor} ({decision.reason})"
    in_evidence = sum(1 for link in facts.links if link.in_evidence)
    description = (f"{h} {'set to' if previous else 'resolved'} {decision.outcome} (confidence "
                   f"{decision.confidence:.2f}) by {who}; corpus verdict {facts.corpus_verdict} (supports "
                   f"{facts.balance.supports:g} vs contradicts {facts.balance.contradicts:g}, "
                   f"{count(in_evidence, 'link')} in the evidence); {_describe_baseline(baseline)}; "
                   f"credit deltas at {deltas_path(seq)}")
    trailers = {"Hypothesis": h, "Verdict": decision.outcome}
    if decision.actor_type == "human":
        trailers = {"Operator": decision.operator or decision.actor, "Decided-By": decision.actor, **trailers}
    else:
        trailers["Resolver"] = decision.by.id
    body = f"Reason: {decision.reason}" if decision.reason else (
        f"Resolve request {facts.proposal.request_sha256}." if facts.proposal else "")
    contribution = Contribution(writes=contribution_writes, author=VERIFIER, trailers=trailers, body=body,
                                subject=f"verdict: {h} {decision.outcome} ({decision.code} by {decision.actor})")
    landed = writer.land(ResolveEntry(at=now, reason_code=decision.code, kind="verdict", actor=decision.actor,
                                      actor_type=decision.actor_type, operator=decision.operator,
                                      description=description[:4000]),
                         contribution=contribution, bookkeeping=bookkeeping)
    if landed.row.seq != seq:
        raise ResolverError(f"ledger row {landed.row.seq} landed where {seq} was expected")
    return landed


def _land_proposal(writer: ProjectWriter, slug: str, repo: ProjectRepo, tip: str, record: ResolutionRecord,
                   now: datetime) -> Landed:
    assert record.proposal is not None
    call = record.proposal
    h = record.hypothesis_id
    contribution = Contribution(writes={proposal_path(h): record.to_json()}, author=VERIFIER,
                                subject=f"verdict: {h} proposal {call.verdict} (held for a person)",
                                trailers={"Hypothesis": h, "Resolver": call.model})
    description = (f"{h}: the Resolver proposes {call.verdict} (confidence {call.confidence:.2f}, {call.model}); "
                   f"PROJECT.md holds verdicts: waiting at {proposal_path(h)} for `rw verdict approve` or "
                   "`rw verdict set`")
    return writer.land(ResolveEntry(at=now, outcome="held", reason_code="verdict_held", kind="verdict",
                                    actor=RESOLVER, actor_type="resolver", description=description[:4000]),
                       contribution=contribution)


# --- the daily run ----------------------------------------------------------------------------


def _resolve_one(home: Home, slug: str, hypothesis_id: str, *, now: datetime, backend: Backend,
                 private_key: bytes | None) -> HypothesisRun:
    repo = home.project(slug)
    for _ in range(ATTEMPTS):
        tip = repo.tip()
        assert tip is not None
        view = repo.view(tip)
        hypothesis = current_hypothesis(view, hypothesis_id)
        if hypothesis is None or not is_due(hypothesis, now):
            return HypothesisRun(hypothesis_id, "changed", "no longer active and due")
        asked = gather(view, hypothesis, now=now, history=history_lookup(repo, tip))
        try:
            reply = ask(backend, asked.request)
        except ModelError as exc:
            said, screened = safe_text(str(exc), name="the error message",
                                       instead=f"{type(exc).__name__}; its message was withheld")
            revoked = revoke_in(home.identities, screened, now, "a model command's error")
            said += revocation_note(revoked)
            with ProjectWriter.open(home, slug) as writer:
                landed = writer.land(ResolveEntry(
                    at=now, outcome="rejected", reason_code="model_error", kind="verdict", actor=RESOLVER,
                    actor_type="resolver", description=f"resolve call for {hypothesis_id} failed: {said}"[:4000]))
            return HypothesisRun(hypothesis_id, "failed", said, landed.row.seq)
        screened = screen({"rationale": reply.answer.rationale, "model": reply.model})
        if not screened.clean:
            revoked = revoke_in(home.identities, screened, now, "a model's resolve answer")
            said = (f"the answer to the resolve call for {hypothesis_id} was refused ({SECRET_IN_ANSWER}): "
                    f"{screened.summary()}; nothing of it was kept{revocation_note(revoked)}")
            with ProjectWriter.open(home, slug) as writer:
                landed = writer.land(ResolveEntry(
                    at=now, outcome="rejected", reason_code=SECRET_IN_ANSWER, kind="verdict", actor=RESOLVER,
                    actor_type="resolver", description=said[:4000]))
            return HypothesisRun(hypothesis_id, "failed", said, landed.row.seq)
        with ProjectWriter.open(home, slug) as writer:
            tip = writer.tip
            assert tip is not None
            view = repo.view(tip)
            hypothesis = current_hypothesis(view, hypothesis_id)
            if hypothesis is None or not is_due(hypothesis, now) or view.read(proposal_path(hypothesis_id)):
                return HypothesisRun(hypothesis_id, "changed", "no longer active and due")
            facts = gather(view, hypothesis, now=now, history=history_lookup(repo, tip))
            if request_sha256(facts.request) != reply.request_sha256:
                continue  # evidence or wording moved while the model was asked: ask again
            answer = reply.answer
            call = ModelCall(backend=reply.backend, model=reply.model, request_sha256=reply.request_sha256,
                             answer_sha256=reply.answer_sha256, verdict=answer.verdict,
                             confidence=answer.confidence, rationale=answer.rationale)
            record = facts.record.model_copy(update={"proposal": call})
            project, _ = parse_project(view.read(PROJECT_FILE) or b"", PROJECT_FILE)
            if "verdicts" in project.holds:
                landed = _land_proposal(writer, slug, repo, tip, record, now)
                return HypothesisRun(hypothesis_id, "queued", f"proposal {call.verdict} waits at "
                                     f"{proposal_path(hypothesis_id)} for a person", landed.row.seq)
            decision = Decision(outcome=call.verdict, confidence=call.confidence,
                                by=Decider(type="resolver", id=call.model), reason=None, code="resolved",
                                actor=RESOLVER, actor_type="resolver", operator=None)
            landed = _finalize(writer, slug, repo, tip, record, decision, now=now, private_key=private_key,
                               previous=None)
            status: RunStatus = "unresolved" if call.verdict == "unresolved" else "resolved"
            return HypothesisRun(hypothesis_id, status, landed.row.description, landed.row.seq)
    return HypothesisRun(hypothesis_id, "changed", f"its evidence kept changing over {ATTEMPTS} model calls; "
                         "the next run tries again")


def _open_pending(home: Home, slug: str, *, now: datetime, private_key: bytes | None) -> list[HypothesisRun]:
    """Open the baselines of hypotheses a person decided (their commands never hold the key)."""
    repo = home.project(slug)
    runs = []
    pending = [r.hypothesis_id for r in read_records(repo.view(repo.tip())).values()
               if r.outcome in ("true", "false") and r.baseline is not None and r.baseline.state == "sealed"]
    for h in pending:
        if private_key is None:
            runs.append(HypothesisRun(h, "waiting", "its baseline waits for the Resolver's private key"))
            continue
        with ProjectWriter.open(home, slug) as writer:
            tip = writer.tip
            assert tip is not None
            view = repo.view(tip)
            record = read_record(view, record_path(h))
            state = read_seal(view, h)
            if record is None or record.baseline is None or record.baseline.state != "sealed" or state is None:
                continue
            baseline, writes = _open(home, repo, view, slug, record, state, private_key, now)
            opened = record.model_copy(update={"baseline": baseline})
            writes[record_path(h)] = opened.to_json()
            records = read_records(view)
            records[h] = opened
            writes[RESOLUTION_SCORES] = resolution_scores(Overlay(view, writes), slug, records)
            description = f"opened {h}'s baseline after its verdict {record.outcome}: {_describe_baseline(baseline)}"
            landed = writer.land(ResolveEntry(at=now, reason_code="baseline_opened", kind="baseline", actor=RESOLVER,
                                              actor_type="resolver", description=description), bookkeeping=writes)
            runs.append(HypothesisRun(h, "opened", description, landed.row.seq))
    return runs


def resolve_project(home: Home, slug: str, *, now: datetime, backend: Backend,
                    private_key: bytes | None) -> list[HypothesisRun]:
    """One Resolver run over a project (idempotent: a second run the same day does nothing)."""
    runs = _open_pending(home, slug, now=now, private_key=private_key)
    repo = home.project(slug)
    view = repo.view(repo.tip())
    for hypothesis in hypotheses_in(view):
        if not is_due(hypothesis, now):
            continue
        h = hypothesis.hypothesis_id
        if view.read(proposal_path(h)) is not None:
            runs.append(HypothesisRun(h, "waiting", f"a proposal waits at {proposal_path(h)} for a person"))
            continue
        try:
            runs.append(_resolve_one(home, slug, h, now=now, backend=backend, private_key=private_key))
        except ResolverError as exc:
            runs.append(HypothesisRun(h, "failed", str(exc)))
    return runs


# --- a person's decisions ---------------------------------------------------------------------


def _person(actor: Actor, reason: str) -> str:
    if actor.type != "human":
        raise AuthError("only people approve or set verdicts; register one with `rw agent add HANDLE --operator OP "
                        "--human`")
    return require_reason(reason, "a verdict decision", "--reason")


def approve(home: Home, slug: str, actor: Actor, hypothesis_id: str, *, reason: str, now: datetime,
            private_key: bytes | None = None, door: Door = "cli") -> Landed:
    """The steward (docs/authority.md) approves the Resolver's queued proposal, through the ledger."""
    why = _person(actor, reason)
    repo = home.project(slug)
    with ProjectWriter.open(home, slug) as writer:
        tip = writer.tip
        assert tip is not None
        enforce_at(home, slug, writer.view(), actor, "approve_verdict", now=now, door=door)
        proposal = read_record(repo.view(tip), proposal_path(hypothesis_id))
        if proposal is None or proposal.proposal is None:
            raise NotFound(f"no verdict proposal for {hypothesis_id} waits in {slug}'s queue/verdicts/")
        call = proposal.proposal
        decision = Decision(outcome=call.verdict, confidence=call.confidence,
                            by=Decider(type="human", id=actor.handle), reason=why, code="approved",
                            actor=actor.handle, actor_type="human", operator=actor.operator)
        return _finalize(writer, slug, repo, tip, proposal, decision, now=now, private_key=private_key, previous=None)


def set_verdict(home: Home, slug: str, actor: Actor, hypothesis_id: str, value: Outcome, *, confidence: float,
                reason: str, now: datetime, private_key: bytes | None = None, door: Door = "cli") -> Landed:
    """The steward (docs/authority.md) sets a verdict: over a queued proposal, over an earlier
    verdict (an override: the credit deltas are the differences), or for an active hypothesis
    past its check date."""
    why = _person(actor, reason)
    if not 0.0 <= confidence <= 1.0:
        raise FormatError(f"confidence {confidence} is outside 0..1")
    repo = home.project(slug)
    with ProjectWriter.open(home, slug) as writer:
        tip = writer.tip
        assert tip is not None
        view = repo.view(tip)
        enforce_at(home, slug, view, actor, "set_verdict", now=now, door=door)
        hypothesis = current_hypothesis(view, hypothesis_id)
        if hypothesis is None:
            raise NotFound(f"no hypothesis {hypothesis_id} in {slug}")
        previous = None
        facts = read_record(view, proposal_path(hypothesis_id))
        if facts is None and hypothesis.status == "active":
            if not is_due(hypothesis, now):
                check = hypothesis.resolution.check_date.isoformat() if hypothesis.resolution else "(none)"
                raise ConflictError(f"{hypothesis_id} is active and its check date {check} has not passed")
            facts = gather(view, hypothesis, now=now, history=history_lookup(repo, tip)).record
        elif facts is None:
            previous = read_record(view, record_path(hypothesis_id))
            if previous is None:
                raise ConflictError(f"{hypothesis_id} is {hypothesis.status} and has no resolution record: a verdict "
                                    "is set once it is active and its check date has passed")
            if previous.outcome == value and previous.confidence == confidence:
                raise ConflictError(f"{hypothesis_id} is already {value} with confidence {confidence}")
            facts = previous
        decision = Decision(outcome=value, confidence=confidence, by=Decider(type="human", id=actor.handle),
                            reason=why, code="verdict_set", actor=actor.handle, actor_type="human",
                            operator=actor.operator)
        return _finalize(writer, slug, repo, tip, facts, decision, now=now, private_key=private_key,
                         previous=previous)

