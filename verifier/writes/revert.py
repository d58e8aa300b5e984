"""Reverts (design §11): a person (or the Resolver, on request, §5.1) undoes an accepted
contribution, with a reason.

The revert commit restores every path the contribution changed to its state before it, carries
the reason, the Operator trailer and `Reverts: <commit>`, withdraws the citations the reverted
objects made (rescoring) and everything that rests on what it withdraws (checks.dependants: the
cascade, named in the body and the ledger row), and writes a ledger row. It is refused, with the reason, when the
commit is not on the branch, is the verifier's own (the ledger is append-only), or when a path it
changed has changed again since (it would not apply cleanly).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import pygit2

from verifier.checks.dependants import cascade, missing_bases, withdrawn_note
from verifier.errors import AuthError, ConflictError, NotFound
from verifier.formats.entries import RevertEntry
from verifier.pipeline.landing import Contribution, Landed
from verifier.pipeline.scores import apply_writes
from verifier.pipeline.writer import ProjectWriter
from verifier.scoring.use import ScoreBook
from verifier.store.audit import Door
from verifier.store.gitrepo import VERIFIER_EMAIL, Person, ProjectRepo, agent_email
from verifier.store.home import Home
from verifier.store.identities import Actor
from verifier.text.visible import require_reason
from verifier.writes.authority import enforce_at

RESOLVER = "resolver"  # the Resolver's handle, operator and actor type in the ledger
RevertActor = Literal["human", "resolver"]


def revert(home: Home, slug: str, actor: Actor, commit: str, *, reason: str, now: datetime,
           door: Door = "cli") -> Landed:
    """The steward or a maintainer (docs/authority.md) reverts a contribution."""
    if actor.type != "human":
        raise AuthError("only people (maintainers, the Resolver's operator) revert contributions")
    with ProjectWriter.open(home, slug) as writer:
        enforce_at(home, slug, writer.view(), actor, "revert", now=now, door=door)
        entry, contribution, bookkeeping = revert_landing(writer, actor.handle, actor.operator, "human", commit,
                                                          reason=reason, now=now)
        return writer.land(entry, contribution=contribution, bookkeeping=bookkeeping)


def resolver_revert(home: Home, slug: str, commit: str, *, reason: str, now: datetime) -> Landed:
    """The Resolver reverts a contribution on request (design §5.1): the same path as a person's,
    with its own actor type in the ledger. The caller has proved it runs as the Resolver."""
    return _revert(home, slug, RESOLVER, RESOLVER, "resolver", commit, reason=reason, now=now)


def _description(target_id: str, reason: str, withdrawn: str) -> str:
    """The ledger row's description: what was reverted, why (cut to fit), and what went with it."""
    return f"reverted {target_id}: {reason.strip()[:4000 - 60 - len(withdrawn)]}{withdrawn}"


def _revert(home: Home, slug: str, handle: str, operator: str, actor_type: RevertActor, commit: str, *, reason: str,
            now: datetime) -> Landed:
    with ProjectWriter.open(home, slug) as writer:
        entry, contribution, bookkeeping = revert_landing(writer, handle, operator, actor_type, commit,
                                                          reason=reason, now=now)
        return writer.land(entry, contribution=contribution, bookkeeping=bookkeeping)


def _reverted_by(repo: ProjectRepo, tip: str, target_id: str) -> str | None:
    """The newest commit between the tip and `target_id` whose trailer says it reverts it."""
    marker = f"\nReverts: {target_id}"
    commit: pygit2.Commit | None = repo.commit(tip)
    while commit is not None and str(commit.id) != target_id:
        if marker in commit.message:
            return str(commit.id)
        commit = commit.parents[0] if commit.parents else None
    return None


def revert_landing(writer: ProjectWriter, handle: str, operator: str, actor_type: RevertActor, commit: str, *,
                   reason: str, now: datetime) -> tuple[RevertEntry, Contribution, dict[str, bytes | None]]:
    """What reverting `commit` lands on the writer's tip: (entry, contribution, bookkeeping),
    the cascade of what rests on the withdrawn objects included. The reason is held to the one
    reason rule (verifier.text.visible)."""
    reason = require_reason(reason, "a revert", "--reason")
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
        if all(now_view.blob_id(path) == before.blob_id(path) for path in paths):  # every change undone
            by = _reverted_by(repo, tip, target_id)
            undo = f"revert {by[:12]}" if by else "edit them back (later commits undid them, none of them a revert)"
            raise ConflictError(f"{target_id[:12]} is already reverted{f' by {by[:12]}' if by else ''}: none of "
                                f"its changes is on the branch; to bring them back, {undo}", code="already_reverted")
        raise ConflictError(f"cannot revert {target_id[:12]} cleanly: {', '.join(moved[:5])} changed since; "
                            "revert the later commits first")
    writes: dict[str, bytes | None] = {path: before.read(path) for path in paths}
    book = ScoreBook(now_view.read)
    resting = cascade(now_view, writes, book.rests)  # what rests on the withdrawn objects goes with them
    if resting.blockers:
        raise ConflictError(f"cannot revert {target_id[:12]}: documents cite what it withdraws: "
                            f"{'; '.join(resting.blockers[:10])}; edit or revert them first")
    gone = missing_bases(now_view, writes)  # a revert of a revert brings back nothing left dangling
    if gone:
        raise ConflictError(f"cannot revert {target_id[:12]}: {'; '.join(gone[:10])}; "
                            "revert the revert that withdrew it first")
    writes.update(resting.withdrawn)
    apply_writes(book, now_view, writes, operator)
    subject = target.message.strip().splitlines()[0] if target.message.strip() else target_id
    contribution = Contribution(
        writes=writes, author=Person(handle, agent_email(handle)),
        subject=f'Revert "{subject}"'[:200],
        body=f"This reverts commit {target_id}.\n\nReason: {reason.strip()}" + withdrawn_note(resting),
        trailers={"Operator": operator, "Reverts": target_id},
    )
    entry = RevertEntry(at=now, actor=handle, actor_type=actor_type, operator=operator,
                        description=_description(target_id, reason, withdrawn_note(resting, line=True)))
    return entry, contribution, book.writes()
