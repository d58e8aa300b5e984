"""Holds (design §8): what waits in queue/<hold>/, and a person's approval or rejection of it.

Approving moves an object's files from queue/<hold>/<path> to <path> (a held source becomes
included: a person vouched for it); rejecting removes them. Either way it is one commit by the
person, with the Operator trailer and the reason, one ledger row, and a rescore. The object keeps
the operator of the agent that made it, found through its leaf's result file. Approving a held
plan also activates the loose hypotheses it targets that are ready for a plan (design §3.5, the
one rule in checks.hypotheses), in the same commit; the caller then seals their baselines.
"""

from __future__ import annotations

from datetime import datetime

from verifier.checks.hypotheses import activation_writes
from verifier.errors import AuthError, ConflictError, FormatError, NotFound
from verifier.formats.document import parse_plan
from verifier.formats.entries import HoldEntry
from verifier.formats.source import parse_source
from verifier.formats.yamlout import dump_yaml
from verifier.pipeline.landing import Contribution, Landed
from verifier.pipeline.scores import apply_writes
from verifier.pipeline.writer import ProjectWriter
from verifier.scoring.use import ScoreBook
from verifier.state.layout import QUEUE_DIR, classify, queue_path
from verifier.state.project import HeldObject, ProjectView
from verifier.store.audit import Door
from verifier.store.gitrepo import GitTree, Person, ProjectRepo, agent_email
from verifier.store.home import Home
from verifier.store.identities import Actor
from verifier.text.visible import require_reason
from verifier.writes.authority import enforce_at


def operator_of(repo: ProjectRepo, view: GitTree, held: HeldObject, fallback: str) -> str:
    """Who made a held object: the operator of the leaf whose landing put exactly these bytes in
    the queue. The object's text only names a candidate leaf; the leaf's result file and its
    commit must confirm it, or the approver's operator is used."""
    if not held.leaf_id:
        return fallback
    try:
        result = ProjectView(view).result(held.leaf_id)
    except FormatError:
        return fallback
    if result is None or result.operator is None or result.commit is None or not repo.has_object(result.commit):
        return fallback
    operator, commit = result.operator, result.commit
    landed = repo.view(commit)
    for path in held.paths:
        queued = queue_path(held.hold, path)
        if landed.blob_id(queued) is None or landed.blob_id(queued) != view.blob_id(queued):
            return fallback
    return operator


def decide(home: Home, slug: str, actor: Actor, object_id: str, *, approve: bool, reason: str,
           now: datetime, door: Door = "cli") -> Landed:
    """Approve or reject one held object, as the project's steward (docs/authority.md), through
    the ledger."""
    if actor.type != "human":
        raise AuthError("only people decide holds; register one with `rw agent add HANDLE --operator OP --human`")
    reason = require_reason(reason, "a hold decision", "--reason")
    with ProjectWriter.open(home, slug) as writer:
        repo, view = writer.repo, writer.view()
        enforce_at(home, slug, view, actor, "decide_hold", now=now, door=door)
        held = next((item for item in ProjectView(view).held if item.object_id == object_id), None)
        if held is None:
            raise NotFound(f"nothing with id {object_id} is held in {slug}'s queue")
        writes: dict[str, bytes | None] = {}
        for path in held.paths:
            queued = queue_path(held.hold, path)
            writes[queued] = None
            if approve:
                if view.read(path) is not None:
                    raise ConflictError(f"{path} already exists in the corpus; reject the held copy instead")
                data = view.read(queued) or b""
                if classify(path) is not None and classify(path).type == "source":  # type: ignore[union-attr]
                    record = parse_source(data, path).model_copy(update={"status": "included"})
                    data = dump_yaml(record.model_dump(mode="json", exclude_none=True))
                writes[path] = data
                if held.type == "plan":
                    writes.update(activation_writes(view, parse_plan(data, path)[0].hypotheses, now.date()))
        verb = "approve" if approve else "reject"
        book = ScoreBook(view.read)
        apply_writes(book, view, {p: d for p, d in writes.items() if not p.startswith(QUEUE_DIR)},
                     operator_of(repo, view, held, actor.operator))
        contribution = Contribution(
            writes=writes, author=Person(actor.handle, agent_email(actor.handle)),
            subject=f"hold: {verb} {held.type} {object_id}", body=f"Reason: {reason.strip()}",
            trailers={"Operator": actor.operator, "Hold": f"{verb} {held.hold}"},
        )
        entry = HoldEntry(at=now, leaf_id=held.leaf_id, kind=held.type, actor=actor.handle,
                          operator=actor.operator, reason_code="approve" if approve else "reject",
                          description=f"{'approved' if approve else 'rejected'} held {held.type} {object_id}: "
                                      f"{reason.strip()}")
        return writer.land(entry, contribution=contribution, bookkeeping=book.writes())
