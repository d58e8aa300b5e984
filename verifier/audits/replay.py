"""`rw replay` (design §13): rebuild the canonical state from git history alone and name every
difference from the tip.

Walking the first-parent history from the first commit:
- a ledger commit (the verifier's) carries its row in its message: the rows rebuild the ledger,
  and its changes may touch only bookkeeping paths (ledger/, scores/, leaves/) — or, for the rows
  that create a project or write a leaf, the files those rows name;
- every other commit is a contribution (agent, person, hold decision, revert): its changes feed
  the use scores with the operator of its Operator trailer (a hold approval: the operator of the
  agent that made the object), exactly as landing does.
The rebuilt ledger segments, use-score files and leaf results are then compared byte for byte
with the tip.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pygit2

from verifier.audits.audit import history_problems
from verifier.formats.leaf import LeafResult
from verifier.formats.ledger import ROWS_PER_SEGMENT, LedgerRow, parse_ledger_subject
from verifier.patch.apply import git_blob_id
from verifier.pipeline.routing import count_objects
from verifier.pipeline.scores import apply_writes
from verifier.scoring.use import SCORED_TYPES, ScoreBook
from verifier.state.layout import (
    LEAVES_DIR,
    LEDGER_DIR,
    QUEUE_DIR,
    SCORES_DIR,
    USE_SCORES,
    USE_SHARD_ROOT,
    classify,
    leaf_result_path,
    queue_path,
    segment_path,
)
from verifier.state.project import ProjectView
from verifier.store.gitrepo import VERIFIER_EMAIL, GitTree, ProjectRepo
from verifier.store.home import Anchor
from verifier.writes.holds import operator_of

_BOOKKEEPING = (LEDGER_DIR, SCORES_DIR)


@dataclass
class ReplayReport:
    commits: int = 0
    rows: int = 0
    differences: list[str] = field(default_factory=list)
    # The ledger segments and use-score files history produces, by path: the rebuilt state that
    # readers such as `rw eval` can be run over instead of the tip's copies.
    rebuilt: dict[str, bytes] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.differences


def _trailers(message: str) -> dict[str, str]:
    last = message.strip().split("\n\n")[-1]
    pairs = (line.split(": ", 1) for line in last.splitlines() if ": " in line)
    return dict(pairs)


_TREE = pygit2.enums.ObjectType.TREE


def _diff_trees(repo: pygit2.Repository, old: pygit2.Tree | None, new: pygit2.Tree, prefix: str,
                out: dict[str, pygit2.Oid | None], skip: tuple[str, ...] = ()) -> None:
    """Changed file paths between two trees (blob id, or None when deleted), descending only into
    subtrees whose ids differ; top-level names in `skip` are reported as a whole, not descended.

    Only paths and ids are needed, so this beats a full diff, which also reads changed blobs."""
    before = {entry.name: entry for entry in old} if old is not None else {}
    for entry in new:
        previous = before.pop(entry.name or "", None)
        if previous is not None and previous.id == entry.id:
            continue
        path = f"{prefix}{entry.name}"
        if entry.type == _TREE and path not in skip:
            older = repo[previous.id] if previous is not None and previous.type == _TREE else None
            subtree = repo[entry.id]
            assert isinstance(subtree, pygit2.Tree)
            _diff_trees(repo, older if isinstance(older, pygit2.Tree) else None, subtree, f"{path}/", out, skip)
        else:
            out[path] = entry.id
    for name, gone in before.items():
        path = f"{prefix}{name}"
        if gone.type == _TREE and path not in skip:
            subtree = repo[gone.id]
            assert isinstance(subtree, pygit2.Tree)
            deleted: dict[str, pygit2.Oid | None] = {}
            _diff_trees(repo, None, subtree, f"{path}/", deleted, skip)
            out.update(dict.fromkeys(deleted))
        else:
            out[path] = None


def _changes(repo: pygit2.Repository, parent: pygit2.Commit | None, commit: pygit2.Commit,
             *, bookkeeping: bool) -> dict[str, bytes | None]:
    """Paths a commit changed, with the bytes of scored objects only. For the verifier's ledger
    commits, ledger/ and scores/ are reported as a whole: their contents are rebuilt and compared
    at the end, and what matters here is that nothing else changed."""
    ids: dict[str, pygit2.Oid | None] = {}
    _diff_trees(repo, parent.tree if parent is not None else None, commit.tree, "", ids,
                skip=_BOOKKEEPING if bookkeeping else ())
    changes: dict[str, bytes | None] = {}
    for path, oid in ids.items():
        kind = classify(path)
        if oid is None:
            changes[path] = None
        elif kind is None or kind.type not in SCORED_TYPES:
            changes[path] = b""
        else:
            blob = repo[oid]
            changes[path] = blob.data if isinstance(blob, pygit2.Blob) else b""
    return changes


def _first_parent_chain(repo: ProjectRepo, tip: str) -> list[pygit2.Commit]:
    """The branch's commits, oldest first, along first parents."""
    chain: list[pygit2.Commit] = []
    commit = repo.commit(tip)
    while True:
        chain.append(commit)
        if not commit.parents:
            break
        commit = commit.parents[0]
    chain.reverse()
    return chain


def replay(repo: ProjectRepo, anchor: Anchor | None = None, *, check_anchor: bool = False) -> ReplayReport:
    """Rebuild from history and compare with the tip; with `check_anchor`, also hold the branch to
    the anchor (the tip is the anchor's commit, no commit was written outside the verifier)."""
    report = ReplayReport()
    if check_anchor:
        report.differences += history_problems(repo, anchor)
    tip = repo.tip()
    if tip is None:
        report.differences.append("the project has no commits")
        return report
    chain = _first_parent_chain(repo, tip)
    book = ScoreBook(lambda _path: None)
    lines: list[bytes] = []
    results: dict[str, bytes] = {}
    added_by_commit: dict[str, int] = {}
    parent: pygit2.Commit | None = None
    for commit in chain:
        report.commits += 1
        sha = str(commit.id)
        is_ledger = commit.author.email == VERIFIER_EMAIL and parse_ledger_subject(commit.message) is not None
        changes = _changes(repo.repo, parent, commit, bookkeeping=is_ledger)
        if is_ledger:
            parsed = _row_of(commit, report)
            if parsed is not None:
                line, row = parsed
                lines.append(line)
                _check_bookkeeping(row, changes, sha, report)
                if row.action == "submit" and row.outcome in ("accepted", "held") and row.commit and row.leaf_id:
                    objects = added_by_commit.get(row.commit, 0)
                    book.record_submission(row.operator or row.actor, objects=objects,
                                           tokens=row.cost.tokens, usd=row.cost.usd)
                    results[leaf_result_path(row.leaf_id)] = _leaf_result(row, row.leaf_id)
        else:
            trailers = _trailers(commit.message)
            before = GitTree(repo.repo, parent.tree if parent is not None else None)
            operator = trailers.get("Operator", commit.author.name)
            if "Hold" in trailers and trailers["Hold"].startswith("approve"):
                for held in ProjectView(before).held:
                    if any(queue_path(held.hold, path) in changes for path in held.paths):
                        operator = operator_of(repo, before, held, operator)
                        break
            added = apply_writes(book, before, {p: d for p, d in changes.items() if not p.startswith(f"{QUEUE_DIR}/")},
                                 operator)
            added_by_commit[sha] = added or count_objects(changes)
        parent = commit
    report.rows = len(lines)
    tip_view = repo.view(tip)
    scores = _all_scores(book)
    _compare_ledger(tip_view, lines, report)
    _compare_files(tip_view, scores, [USE_SHARD_ROOT, USE_SCORES], report)
    report.rebuilt = {**_ledger_files(lines), **scores}
    _compare_results(tip_view, results, report)
    return report


def _row_of(commit: pygit2.Commit, report: ReplayReport) -> tuple[bytes, LedgerRow] | None:
    """The exact ledger line a ledger commit's message carries, and the row it holds."""
    parts = commit.message.split("\n\n")
    try:
        line = parts[1].encode("utf-8") + b"\n"
        return line, LedgerRow.model_validate_json(line)
    except (IndexError, ValueError) as exc:
        report.differences.append(f"commit {commit.id}: ledger commit without a readable row ({exc})")
        return None


def _check_bookkeeping(row: LedgerRow, changes: dict[str, bytes | None], sha: str, report: ReplayReport) -> None:
    if row.action == "init":
        return  # project creation writes the template's files
    for path in changes:
        if path.split("/", 1)[0] in _BOOKKEEPING:
            continue
        if path.startswith(f"{LEAVES_DIR}/") and (path.endswith(".result.json") or row.action in ("leaf", "plan")):
            continue
        report.differences.append(f"commit {sha[:12]} (ledger row {row.seq}) changes {path}, "
                                  "which only a contribution commit may change")


def _leaf_result(row: LedgerRow, leaf_id: str) -> bytes:
    return LeafResult(leaf_id=leaf_id, outcome=row.outcome, commit=row.commit, actor=row.actor, operator=row.operator,
                      trace_id=row.trace_id, at=row.at).dump()


def _all_scores(book: ScoreBook) -> dict[str, bytes]:
    if not book.dirty and not book.summary_dirty:
        return {}  # nothing was ever scored (a fresh project, rejected attempts): landing wrote no scores either
    # Every shard history touched is rewritten (a shard only read, never written, stays absent).
    book.dirty = {path for path, shard in book.shards.items() if shard}
    book.summary_dirty = True
    return {path: data for path, data in book.writes().items() if data is not None}


def _ledger_files(lines: list[bytes]) -> dict[str, bytes]:
    expected: dict[str, bytes] = {}
    for seq, line in enumerate(lines):
        expected[segment_path(seq)] = expected.get(segment_path(seq), b"") + line
    return expected


def _compare_ledger(view: GitTree, lines: list[bytes], report: ReplayReport) -> None:
    _compare_files(view, _ledger_files(lines), [LEDGER_DIR], report)
    if len(lines) and len(lines) // ROWS_PER_SEGMENT + 1 < len(view.list_dir(LEDGER_DIR)):
        report.differences.append(f"{LEDGER_DIR}/ holds more segments than history has rows")


def _compare_results(view: GitTree, expected: dict[str, bytes], report: ReplayReport) -> None:
    actual = {f"{LEAVES_DIR}/{name}" for name in view.list_dir(LEAVES_DIR) if name.endswith(".result.json")}
    for path in sorted(actual | set(expected)):
        if view.read(path) != expected.get(path):
            report.differences.append(f"{path}: differs from the ledger's account of the leaf")


def _compare_files(view: GitTree, expected: dict[str, bytes], roots: list[str], report: ReplayReport) -> None:
    actual: set[str] = set()
    for root in roots:
        if view.read(root) is not None:
            actual.add(root)
        else:
            actual.update(view.walk(root))
    for path in sorted(actual | set(expected)):
        # Compare git blob ids: equal ids are equal bytes, and the tip's blobs need not be read.
        want = expected.get(path)
        have = view.blob_id(path)
        if have == (git_blob_id(want) if want is not None else None):
            continue
        if want is None:
            report.differences.append(f"{path}: present at the tip, but history does not produce it")
        elif have is None:
            report.differences.append(f"{path}: missing at the tip")
        else:
            report.differences.append(f"{path}: differs from what history produces")
