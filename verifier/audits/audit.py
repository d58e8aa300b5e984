"""`rw ledger --verify`: the ledger's chain, its agreement with the branch, and with the anchor.

Reports (never repairs): a row whose prev hash does not match (rewritten, reordered, truncated in
the middle), a segment out of place, an accepted row whose commit is not on the branch, and a
ledger shorter than, or different from, the head recorded in the anchor outside the repository
(a truncated ledger or a branch reset under it), a tip that is not the anchor's commit, and every
commit on the branch that is neither one of the verifier's ledger commits nor named by a ledger
row (a push or a commit written with git plumbing), by its id and author.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pygit2

from verifier.errors import FormatError, LedgerIntegrityError
from verifier.formats.ledger import LedgerRow, row_hash
from verifier.pipeline.ledger import read_chain
from verifier.pipeline.writer import ledger_commit_row
from verifier.store.gitrepo import ProjectRepo
from verifier.store.home import Anchor


@dataclass
class LedgerReport:
    rows: list[LedgerRow] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_ledger(repo: ProjectRepo, anchor: Anchor | None) -> LedgerReport:
    report = LedgerReport()
    tip = repo.tip()
    if tip is None:
        report.problems.append("the project has no commits")
        return report
    hashes: list[str] = []
    try:
        for line, row in read_chain(repo.view(tip)):
            report.rows.append(row)
            hashes.append(row_hash(line))
    except (LedgerIntegrityError, FormatError) as exc:
        report.problems.append(f"chain broken: {exc}")
    branch = branch_commits(repo, tip)  # one walk answers every "is it on the branch?" below
    on_branch = {str(commit.id) for commit in branch}
    for row in report.rows:
        if row.commit is not None and row.commit not in on_branch:
            report.problems.append(f"row {row.seq}: commit {row.commit} is not on the branch")
        if row.outcome in ("accepted", "held") and row.action == "submit" and row.commit is None:
            report.problems.append(f"row {row.seq}: an accepted submission without its commit")
    if anchor is None:
        report.problems.append("no anchor: the ledger head was never recorded outside the repository")
    elif anchor.seq >= len(hashes):
        report.problems.append(
            f"the ledger ends at row {len(hashes) - 1} but row {anchor.seq} was written "
            f"(truncated ledger or branch reset; last written tip {anchor.commit})"
        )
    elif hashes[anchor.seq] != anchor.row_hash:
        report.problems.append(f"row {anchor.seq} differs from the row that was written (rewritten history)")
    elif anchor.commit not in on_branch:
        report.problems.append(f"the branch no longer contains {anchor.commit}, the last written tip (reset)")
    elif anchor.commit != tip:
        report.problems.append(f"the tip {tip} is not {anchor.commit}, the last tip the verifier wrote")
    report.problems += foreign_commits(branch, report.rows, set(hashes))
    return report


def branch_commits(repo: ProjectRepo, tip: str) -> list[pygit2.Commit]:
    """Every commit reachable from the tip."""
    return list(repo.repo.walk(pygit2.Oid(hex=tip), pygit2.enums.SortMode.TOPOLOGICAL))


def history_problems(repo: ProjectRepo, anchor: Anchor | None) -> list[str]:
    """What `verify_ledger` says about the branch against its anchor and its foreign commits."""
    skip = ("chain broken", "row ")
    return [problem for problem in verify_ledger(repo, anchor).problems if not problem.startswith(skip)]


def foreign_commits(branch: list[pygit2.Commit], rows: list[LedgerRow], line_hashes: set[str]) -> list[str]:
    """Every commit of `branch` that is neither a ledger commit whose row is in the chain nor a
    commit a ledger row names."""
    named = {row.commit for row in rows if row.commit is not None}
    problems: list[str] = []
    for commit in branch:
        sha = str(commit.id)
        if sha in named:
            continue
        found = ledger_commit_row(commit)
        if found is not None and row_hash(found[0]) in line_hashes:
            continue
        problems.append(f"commit {sha} by {commit.author.name} <{commit.author.email}> is neither a ledger "
                        "commit nor named by a ledger row (written outside the verifier)")
    return problems
