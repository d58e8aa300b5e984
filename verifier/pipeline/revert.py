"""Reverts (design §11): a person undoes an accepted contribution, with a reason.

The revert commit restores every path the contribution changed to its state before it, carries
the reason, the Operator trailer and `Reverts: <commit>`, withdraws the citations the reverted
objects made (rescoring), and writes a ledger row. It is refused, with the reason, when the
commit is not on the branch, is the verifier's own (the ledger is append-only), or when a path it
changed has changed again since (it would not apply cleanly).
"""

from __future__ import annotations

from datetime import datetime

from verifier.errors import AuthError, ConflictError, FormatError, NotFound
from verifier.formats.entries import RevertEntry
from verifier.pipeline.landing import Contribution, Landed
from verifier.pipeline.scores import apply_writes
from verifier.pipeline.writer import ProjectWriter
from verifier.scoring.use import ScoreBook
from verifier.store.gitrepo import VERIFIER_EMAIL, Person, agent_email
from verifier.store.home import Home
from verifier.store.identities import Actor


def revert(home: Home, slug: str, actor: Actor, commit: str, *, reason: str, now: datetime) -> Landed:
    if actor.type != "human":
        raise AuthError("only people (maintainers, the Resolver's operator) revert contributions")
    if not reason.strip():
        raise FormatError("a revert needs a reason (--reason)")
    with ProjectWriter.open(home, slug) as writer:
        entry, contribution, bookkeeping = revert_landing(writer, actor, commit, reason=reason, now=now)
        return writer.land(entry, contribution=contribution, bookkeeping=bookkeeping)


def revert_landing(writer: ProjectWriter, actor: Actor, commit: str, *, reason: str,
                   now: datetime) -> tuple[RevertEntry, Contribution, dict[str, bytes | None]]:
    """What reverting `commit` lands on the writer's tip: (entry, contribution, bookkeeping)."""
    repo, tip = writer.repo, writer.tip
    assert tip is not None
    target = repo.commit(commit)
    target_id = str(target.id)
    if not repo.is_ancestor(target_id, tip):
        raise NotFound(f"commit {commit} is not on {writer.slug}'s branch")
    if target.author.email == VERIFIER_EMAIL:
        raise ConflictError(f"{target_id[:12]} is the verifier's own commit (ledger, leaves, init); "
                            "the ledger is append-only: revert the contribution commit instead")
    if len(target.parents) != 1:
        raise ConflictError(f"{target_id[:12]} has {len(target.parents)} parents; only plain commits revert")
    parent = str(target.parents[0].id)
    before, after, now_view = repo.view(parent), repo.view(target_id), repo.view(tip)
    paths = repo.changed_paths(parent, target_id)
    moved = [path for path in paths if now_view.blob_id(path) != after.blob_id(path)]
    if moved:
        raise ConflictError(f"cannot revert {target_id[:12]} cleanly: {', '.join(moved[:5])} changed since; "
                            "revert the later commits first")
    writes = {path: before.read(path) for path in paths}
    book = ScoreBook(now_view.read)
    apply_writes(book, now_view, writes, actor.operator)
    subject = target.message.strip().splitlines()[0] if target.message.strip() else target_id
    contribution = Contribution(
        writes=writes, author=Person(actor.handle, agent_email(actor.handle)),
        subject=f'Revert "{subject}"'[:200],
        body=f"This reverts commit {target_id}.\n\nReason: {reason.strip()}",
        trailers={"Operator": actor.operator, "Reverts": target_id},
    )
    entry = RevertEntry(at=now, actor=actor.handle, operator=actor.operator,
                        description=f"reverted {target_id}: {reason.strip()}")
    return entry, contribution, book.writes()
