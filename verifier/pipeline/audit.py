"""`rw ledger --verify`: the ledger's chain, its agreement with the branch, and with the anchor.

Reports (never repairs): a row whose prev hash does not match (rewritten, reordered, truncated in
the middle), a segment out of place, an accepted row whose commit is not on the branch, and a
ledger shorter than, or different from, the head recorded in the anchor outside the repository
(a truncated ledger or a branch reset under it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from verifier.errors import FormatError, LedgerIntegrityError
from verifier.formats.ledger import LedgerRow, row_hash
from verifier.pipeline.ledger import read_chain
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
    for row in report.rows:
        if row.commit is not None and not repo.is_ancestor(row.commit, tip):
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
    elif not repo.is_ancestor(anchor.commit, tip):
        report.problems.append(f"the branch no longer contains {anchor.commit}, the last written tip (reset)")
    return report
