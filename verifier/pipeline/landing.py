"""Step 7, landing: the contribution commit, its ledger row and the branch move, all or nothing.

An accepted contribution is one commit, authored by the agent and committed by the verifier, with
the trailers Operator, Leaf, Trace and Verifier-Version; it holds exactly the routed patch. A
second, verifier-authored commit on top appends the ledger row (and any bookkeeping file, such as
the leaf's result). Every attempt, rejected ones too, gets that ledger commit. Objects are written
first; the branch moves once, from the tip we read to the new ledger commit, under the project
lock; a crash before that move leaves the branch, ledger and anchor as they were (the unreachable
objects it wrote are garbage for `git gc`). The anchor outside the repository then records the
new ledger head, so a later branch reset under the ledger is caught.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from verifier import VERSION
from verifier.formats.ledger import LedgerRow, row_hash
from verifier.pipeline.ledger import append_row
from verifier.store.gitrepo import VERIFIER, Person, ProjectRepo
from verifier.store.home import Anchor, Home

# A test-only hook: called with a step name before each durable step, so the crash tests can kill
# the process at exactly that point. Production leaves it as a no-op.
crash_point: Callable[[str], None] = lambda _step: None  # noqa: E731


@dataclass(frozen=True)
class Contribution:
    writes: dict[str, bytes | None]
    author: Person
    subject: str
    body: str = ""
    trailers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Landed:
    row: LedgerRow
    commit: str | None  # the contribution commit, if any
    tip: str  # the branch tip after landing (the ledger commit)


def message(subject: str, body: str, trailers: dict[str, str]) -> str:
    """A commit message: subject, optional body, then git trailers."""
    parts = [subject.strip().splitlines()[0][:200] if subject.strip() else "(no subject)"]
    if body.strip():
        parts.append(body.strip())
    if trailers:
        parts.append("\n".join(f"{key}: {value}" for key, value in trailers.items()))
    return "\n\n".join(parts) + "\n"


def land(
    home: Home,
    slug: str,
    repo: ProjectRepo,
    *,
    tip: str | None,
    now: datetime,
    row_fields: dict[str, Any],
    contribution: Contribution | None = None,
    bookkeeping: dict[str, bytes | None] | None = None,
    bookkeeping_of: Callable[[str | None], dict[str, bytes | None]] | None = None,
) -> Landed:
    """Write the commits for one attempt and move the branch. The caller holds the lock.

    `bookkeeping_of(commit)` builds bookkeeping files that must name the contribution commit.
    """
    parent = tip
    commit_id: str | None = None
    if contribution is not None:
        crash_point("contribution")
        tree = repo.build_tree(tip, contribution.writes)
        trailers = {**contribution.trailers, "Verifier-Version": VERSION}
        commit_id = repo.create_commit(
            tree=tree, parents=[tip] if tip else [], author=contribution.author,
            committer=VERIFIER, message=message(contribution.subject, contribution.body, trailers), when=now,
        )
        parent = commit_id
    view = repo.view(parent)
    row, line, ledger_writes = append_row(
        view, {**row_fields, "commit": commit_id, "verifier_version": VERSION}
    )
    writes: dict[str, bytes | None] = dict(bookkeeping or {})
    if bookkeeping_of is not None:
        writes.update(bookkeeping_of(commit_id))
    writes.update(ledger_writes)
    crash_point("ledger")
    tree = repo.build_tree(parent, writes)
    row_json = line.decode("utf-8").rstrip("\n")  # the exact ledger line, so replay can rebuild it byte for byte
    subject = f"ledger: #{row.seq} {row.outcome} {row.action}" + (f" {row.leaf_id}" if row.leaf_id else "")
    ledger_commit = repo.create_commit(
        tree=tree, parents=[parent] if parent else [], author=VERIFIER, committer=VERIFIER,
        message=message(subject, row_json, {"Verifier-Version": VERSION}), when=now,
    )
    crash_point("branch")
    repo.move_branch(ledger_commit, tip)
    crash_point("anchor")
    home.write_anchor(slug, Anchor(row.seq, row_hash(line), ledger_commit))
    return Landed(row, commit_id, ledger_commit)
