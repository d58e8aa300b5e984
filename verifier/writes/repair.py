"""`rw repair`: a person puts a project's branch back on a commit the ledger vouches for.

A project whose branch is not what its anchor and ledger say refuses every write (pipeline.writer).
Repair is the way out, and is itself a ledger row: the target must be one of the verifier's ledger
commits whose history holds up on its own (an unbroken chain, every commit a ledger commit or named
by a row); the repair row lands on top of it, the branch moves there from whatever it was, and the
anchor follows. The commits that are set aside are named, by id and author, in the row.
"""

from __future__ import annotations

from datetime import datetime

import pygit2

from verifier.audits.audit import branch_commits, foreign_commits
from verifier.errors import AuthError, ConflictError, FormatError, LedgerIntegrityError
from verifier.formats.entries import RepairEntry
from verifier.formats.ledger import row_hash
from verifier.pipeline.landing import Landed
from verifier.pipeline.ledger import read_chain
from verifier.pipeline.writer import ProjectWriter, ledger_commit_row
from verifier.store.audit import Door
from verifier.store.files import exclusive_lock
from verifier.store.gitrepo import ProjectRepo
from verifier.store.home import Home
from verifier.store.identities import Actor
from verifier.text.visible import require_reason
from verifier.writes.authority import enforce_at


def _check_target(repo: ProjectRepo, target: str) -> None:
    commit = repo.commit(target)
    found = ledger_commit_row(commit)
    if found is None:
        raise ConflictError(f"{target[:12]} is not a ledger commit of the verifier; repair to one "
                            "(see `rw ledger SLUG --verify` for the last tip the verifier wrote)")
    try:
        rows_and_lines = list(read_chain(repo.view(target)))
    except (LedgerIntegrityError, FormatError) as exc:
        raise ConflictError(f"the ledger at {target[:12]} is itself broken: {exc}") from exc
    if not rows_and_lines or rows_and_lines[-1][0] != found[0]:
        raise ConflictError(f"{target[:12]}'s ledger does not end with the row its message carries")
    hashes = {row_hash(line) for line, _ in rows_and_lines}
    foreign = foreign_commits(branch_commits(repo, target), [row for _, row in rows_and_lines], hashes)
    if foreign:
        raise ConflictError(f"the history below {target[:12]} is not the verifier's either: {foreign[0]}")


def _set_aside(repo: ProjectRepo, tip: str | None, target: str) -> list[str]:
    if tip is None:
        return []
    walker = repo.repo.walk(pygit2.Oid(hex=tip), pygit2.enums.SortMode.TOPOLOGICAL)
    walker.hide(pygit2.Oid(hex=target))
    return [f"{str(commit.id)[:12]} ({commit.author.name})" for commit in walker]


def repair(home: Home, slug: str, actor: Actor, to: str, *, reason: str, now: datetime, door: Door = "cli") -> Landed:
    """The steward, a maintainer or an admin (docs/authority.md) puts the branch back on `to`.
    Who may is read from PROJECT.md at `to`, the revision the ledger vouches for: the tip's
    could have been written by whoever broke the history."""
    if actor.type != "human":
        raise AuthError("only people repair a project; register one with `rw agent add HANDLE --operator OP --human`")
    reason = require_reason(reason, "a repair", "--reason")
    repo = home.project(slug)
    with exclusive_lock(home.lock_path(slug)):
        target = str(repo.commit(to).id)
        _check_target(repo, target)
        enforce_at(home, slug, repo.view(target), actor, "repair", now=now, door=door)
        tip = repo.tip()
        aside = _set_aside(repo, tip, target)
        writer = ProjectWriter(home, slug, repo, crash_point=home.crash_point)
        writer.tip = target  # the repair row lands on the target; the branch moves there from `tip`
        shown = ", ".join(aside[:20]) + (f" and {len(aside) - 20} more" if len(aside) > 20 else "")
        entry = RepairEntry(at=now, actor=actor.handle, operator=actor.operator,
                            description=(f"branch put back on {target} (was {tip}): {reason.strip()}; set aside: "
                                         f"{shown or 'nothing'}")[:4000])
        return writer.land(entry)
