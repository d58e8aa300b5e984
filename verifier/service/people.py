"""What a person does to a project, as plain synchronous calls that answer JSON values: the hold
queue and its decisions, a person's edit, reverts, verdicts, a person's leaf, repair, seal, the
Planner's wake, and the reads (scores, the ledger's check, the evaluation, the audit log).

`rw ... --server` reaches these through `verifier.service.people_routes`; the same commands
without a server call them in-process, so both print the same thing. Who may do what is not
decided here: each write below (verifier.writes, the Resolver's and the Planner's shells) asks
the one authority rule (verifier.roles.authority) under the project's lock, and keeps a refusal in
the audit log. The reads of history are open, as the design's reads are (§9.3); the audit log is
the steward's and the admins'.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import datetime

from verifier.audits.audit import verify_ledger
from verifier.errors import FormatError
from verifier.roles.planner import local_commons, wake
from verifier.roles.records import read_record
from verifier.roles.resolver import approve, set_verdict
from verifier.roles.traceindex import TraceIndex
from verifier.state.layout import PROPOSALS_DIR, USE_SCORES
from verifier.state.project import ProjectView
from verifier.store.audit import Door, read_denials
from verifier.store.fetcher import Fetcher
from verifier.store.home import Home
from verifier.store.identities import Actor
from verifier.ui.leaf_fate import LandedObjects, reverted_by_operator
from verifier.writes.authority import authority_of, enforce
from verifier.writes.baseline import model_backend, seal_missing
from verifier.writes.followups import seal_after_landing
from verifier.writes.holds import decide
from verifier.writes.project import LeafRequest, person_leaf
from verifier.writes.repair import repair
from verifier.writes.revert import revert

Json = dict[str, object]


def held(home: Home, slug: str) -> list[Json]:
    """The hold queue: what waits in queue/<hold>/ for the steward."""
    repo = home.project(slug)
    return [{"hold": h.hold, "object_id": h.object_id, "type": h.type, "paths": list(h.paths), "leaf_id": h.leaf_id}
            for h in ProjectView(repo.view(repo.tip())).held]


def decide_hold(home: Home, actor: Actor, slug: str, object_id: str, *, approve_it: bool, reason: str,
                now: datetime, door: Door = "cli") -> Json:
    """The steward approves or rejects a held object; an approval seals what it activated."""
    landed = decide(home, slug, actor, object_id, approve=approve_it, reason=reason, now=now, door=door)
    sealed, note = seal_after_landing(home, slug, now=now, remote=door == "http") if approve_it else ([], None)
    return {"project": slug, "object_id": object_id, "decision": "approved" if approve_it else "rejected",
            "commit": landed.commit, "ledger_seq": landed.row.seq, "sealed": sealed, "note": note}


def edit(home: Home, token: str, slug: str, patch: bytes, bundle: dict[str, bytes], *, base: str | None,
         now: datetime, fetcher: Fetcher) -> Json:
    """A person's edit (PROJECT.md, hypotheses, sources, reports...) through the pipeline, as
    `rw submit SLUG --patch` lands it in-process: its verdict, and the baselines it left to seal.
    The pipeline authenticates the token and asks the authority rule; a refusal raises."""
    from verifier.pipeline.submit import Submission, submit  # noqa: PLC0415 - loaded by the one action that lands

    verdict = submit(home, Submission(slug, None, patch, bundle, token, base=base, door="http"), now=now,
                     fetcher=fetcher)
    accepted = verdict.outcome == "accepted"
    sealed, note = seal_after_landing(home, slug, now=now, remote=True) if accepted else ([], None)
    return {"verdict": dict(verdict.to_json()), "sealed": sealed, "note": note}


def revert_commit(home: Home, actor: Actor, slug: str, commit: str, *, reason: str, now: datetime,
                  door: Door = "cli") -> Json:
    """The steward or a maintainer reverts a contribution, withdrawing what rests on it."""
    landed = revert(home, slug, actor, commit, reason=reason, now=now, door=door)
    description = landed.row.description
    withdrew = description.rsplit("; withdrew ", 1)[1] if "; withdrew " in description else None
    return {"project": slug, "reverted": commit, "commit": landed.commit, "ledger_seq": landed.row.seq,
            "withdrew": withdrew}


def verdict_proposals(home: Home, slug: str) -> list[Json]:
    """The Resolver's proposals waiting in queue/verdicts/ for the steward."""
    repo = home.project(slug)
    view = repo.view(repo.tip())
    proposals = [read_record(view, f"{PROPOSALS_DIR}/{name}") for name in view.list_dir(PROPOSALS_DIR)
                 if name.endswith(".json")]
    return [{"hypothesis_id": p.hypothesis_id, "verdict": p.proposal.verdict, "confidence": p.proposal.confidence,
             "rationale": p.proposal.rationale, "corpus_verdict": p.corpus_verdict}
            for p in proposals if p is not None and p.proposal is not None]


def approve_verdict(home: Home, actor: Actor, slug: str, hypothesis_id: str, *, reason: str, now: datetime,
                    door: Door = "cli") -> Json:
    landed = approve(home, slug, actor, hypothesis_id, reason=reason, now=now, door=door)
    return {"project": slug, "hypothesis_id": hypothesis_id, "description": landed.row.description,
            "commit": landed.commit, "ledger_seq": landed.row.seq}


def set_hypothesis_verdict(home: Home, actor: Actor, slug: str, hypothesis_id: str, value: str, *,
                           confidence: float, reason: str, now: datetime, door: Door = "cli") -> Json:
    if value not in ("true", "false", "unresolved"):
        raise FormatError(f"verdict {value[:20]!r} is not one of true, false, unresolved", "verdict")
    landed = set_verdict(home, slug, actor, hypothesis_id, value,  # type: ignore[arg-type]  # checked above
                         confidence=confidence, reason=reason, now=now, door=door)
    return {"project": slug, "hypothesis_id": hypothesis_id, "description": landed.row.description,
            "commit": landed.commit, "ledger_seq": landed.row.seq}


def add_person_leaf(home: Home, actor: Actor, slug: str, request: LeafRequest, *, now: datetime,
                    door: Door = "cli") -> Json:
    contract = person_leaf(home, slug, actor, request, now=now, door=door)
    return {"project": slug, "leaf_id": contract.leaf_id, "kind": contract.kind,
            "base_revision": contract.base_revision}


def repair_project(home: Home, actor: Actor, slug: str, to: str, *, reason: str, now: datetime,
                   door: Door = "cli") -> Json:
    landed = repair(home, slug, actor, to, reason=reason, now=now, door=door)
    return {"project": slug, "tip": landed.tip, "ledger_seq": landed.row.seq}


def seal(home: Home, actor: Actor, slug: str, *, now: datetime, door: Door = "cli") -> Json:
    """Seal every active hypothesis's missing baseline, asked by a person (steward, maintainer, admin)."""
    home.project(slug)
    enforce(home, authority_of(home, slug), actor, "seal", now=now, door=door, project=slug)  # before the model
    sealed = seal_missing(home, slug, now=now, backend=model_backend(home))
    return {"project": slug, "sealed": sealed}


def wake_planner(home: Home, actor: Actor, slug: str, *, now: datetime, force: bool, warm_only: bool,
                 door: Door = "cli") -> Json:
    """One wake of the Planner, asked by a person (steward, maintainer, admin)."""
    result = wake(home, slug, now, commons=local_commons(home), force=force, warm_only=warm_only, person=actor,
                  door=door)
    value: Json = dict(result.to_json())
    return {"project": slug, **value}


def scores(home: Home, slug: str) -> Json:
    """The v0 components per operator, side by side (never combined); reverted leaves counted apart."""
    repo = home.project(slug)
    view = repo.view(repo.tip())
    summary = json.loads(view.read(USE_SCORES) or b"{}")
    reverted = reverted_by_operator(view, LandedObjects())
    for name, row in summary.get("operators", {}).items():
        gone = reverted.get(name, [])
        row["accepted_leaves"] = max(0, int(row.get("accepted_leaves", 0)) - len(gone))
        row["reverted_leaves"] = len(gone)
    value: Json = summary
    return value


def ledger_check(home: Home, slug: str) -> Json:
    """`rw ledger --verify`: the hash chain, the commits and the anchor."""
    report = verify_ledger(home.project(slug), home.read_anchor(slug))
    return {"project": slug, "ok": report.ok, "rows": len(report.rows), "problems": list(report.problems)}


def audit(home: Home, actor: Actor | None, slug: str, *, now: datetime, door: Door = "cli") -> Json:
    """The project's denials, oldest first: the steward's and the admins' to read. `actor` None
    is the home's owner at its shell (who owns the file anyway)."""
    home.project(slug)
    if actor is not None:
        enforce(home, authority_of(home, slug), actor, "read_audit", now=now, door=door, project=slug)
    return {"project": slug, "denials": [denial.to_json() for denial in read_denials(home, slug)]}


def traces(home: Home, actor: Actor, slug: str, *, now: datetime, kind: str | None = None,
           outcome: str | None = None, limit: int = 50) -> Json:
    """The project's newest traced attempts (`rw trace list`, of this project only): its steward's
    and the admins' to read (docs/authority.md `read_traces`); agents never read traces."""
    home.project(slug)
    enforce(home, authority_of(home, slug), actor, "read_traces", now=now, door="http", project=slug)
    index = TraceIndex(home)
    index.refresh()
    rows = index.listing(kind=kind, outcome=outcome, limit=limit, projects={slug})
    return {"project": slug, "traces": [asdict(entry) for entry in rows]}


def trace(home: Home, actor: Actor, slug: str, trace_id: str, *, now: datetime) -> Json:
    """One trace of the project (`rw trace show`): the outcomes citing it and its bundle files as
    text (secrets were stripped at ingest); another project's trace is a 404 like a missing one."""
    home.project(slug)
    enforce(home, authority_of(home, slug), actor, "read_traces", now=now, door="http", project=slug)
    index = TraceIndex(home)
    index.refresh()
    detail = index.show(trace_id, projects={slug})
    return {"project": slug, "trace_id": detail.trace_id, "outcomes": [asdict(entry) for entry in detail.entries],
            "files": {name: data.decode("utf-8", "replace") for name, data in sorted(detail.files.items())}}


def evaluation(home: Home, slug: str, *, now: datetime) -> Json:
    """`rw eval SLUG --json`: the design's §12 numbers for one project, from its history alone."""
    # The evaluation brings numpy (a tenth of a second to import): a server pays for it at its
    # first evaluation, not at every start.
    from verifier.evaluation.report import EvalOptions  # noqa: PLC0415
    from verifier.evaluation.sources import evaluate_home, validation_from_home  # noqa: PLC0415

    home.project(slug)
    options = EvalOptions(now=now, recruited=tuple(home.settings.recruited_by_steward),
                          validation=tuple(validation_from_home(home, None)))
    return evaluate_home(home, [slug], options)
