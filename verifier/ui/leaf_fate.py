"""What became of a closed leaf (issue 10: board states follow holds and reverts).

A leaf's result file says `accepted` or `held` at the moment it landed and never changes (the
ledger is history). The board tells what is true now, from the tree: a held leaf is `held` while
any of its objects wait in queue/, then `accepted` if a person approved them (they are in the
corpus) or `rejected` if a person rejected them; an accepted leaf whose objects are all gone
(reverted, or withdrawn with what they rested on) is `reverted`, and `accepted` again once a
revert of the revert restored them. The objects a leaf brought are the paths its contribution
commit added, read once per commit (commits never change) and kept.
"""

from __future__ import annotations

import json
import threading
from typing import Literal

import pygit2

from verifier.state.layout import LEAVES_DIR, QUEUE_DIR, classify
from verifier.state.project import rows_from
from verifier.store.gitrepo import GitTree

Fate = Literal["accepted", "held", "rejected", "reverted"]
_CACHE_LIMIT = 100_000
RESULT_SUFFIX = ".result.json"


def _corpus(path: str) -> str:
    return path.split("/", 2)[2] if path.startswith(f"{QUEUE_DIR}/") and path.count("/") >= 2 else path


class LandedObjects:
    """Object paths each contribution commit added, by commit id, shared by a worker's threads."""

    def __init__(self) -> None:
        self._by_commit: dict[str, tuple[str, ...]] = {}
        self._decisions: dict[str, tuple[int, dict[str, str]]] = {}  # repository -> (next seq, leaf -> verb)
        self._lock = threading.Lock()

    def decision(self, view: GitTree, leaf_id: str) -> str | None:
        """The last hold decision (approve, reject) a person made on the leaf's objects, read from
        the ledger once per row (the ledger is append-only: only new rows are read)."""
        key = str(view.repo.path)
        with self._lock:
            start, known = self._decisions.get(key, (0, {}))
        rows = rows_from(view, start)
        if rows:
            known = dict(known)
            for row in rows:
                if row.action == "hold" and row.leaf_id and row.reason_code in ("approve", "reject"):
                    known[row.leaf_id] = row.reason_code
            with self._lock:
                self._decisions[key] = (rows[-1].seq + 1, known)
        return known.get(leaf_id)

    def added(self, view: GitTree, commit: str) -> tuple[str, ...]:
        with self._lock:
            cached = self._by_commit.get(commit)
        if cached is not None:
            return cached
        found = _added_objects(view.repo, commit)
        with self._lock:
            if len(self._by_commit) >= _CACHE_LIMIT:
                self._by_commit.clear()
            self._by_commit[commit] = found
        return found


def _added_objects(repo: pygit2.Repository, commit_id: str) -> tuple[str, ...]:
    try:
        commit = repo[commit_id]
    except (KeyError, ValueError):
        return ()
    if not isinstance(commit, pygit2.Commit) or len(commit.parents) != 1:
        return ()
    diff = commit.parents[0].tree.diff_to_tree(commit.tree)
    added = [delta.new_file.path for delta in diff.deltas if delta.status_char() == "A"]
    return tuple(sorted(path for path in added if classify(_corpus(path)) is not None))


def fate(view: GitTree, leaf_id: str, outcome: str, commit: str | None, landed: LandedObjects) -> Fate:
    """The state now of a leaf whose result says `outcome` for contribution `commit`."""
    paths = landed.added(view, commit) if commit else ()
    if not paths:
        return "held" if outcome == "held" else "accepted"
    queued = [path for path in paths if path.startswith(f"{QUEUE_DIR}/")]
    if any(view.blob_id(path) is not None for path in queued):
        return "held"
    if any(view.blob_id(_corpus(path)) is not None for path in paths):
        return "accepted"
    if outcome == "held" and landed.decision(view, leaf_id) == "reject":
        return "rejected"
    return "reverted"


def reverted_by_operator(view: GitTree, landed: LandedObjects) -> dict[str, list[str]]:
    """Operator -> the leaves it landed that are `reverted` now (their result files still say
    accepted: the ledger is history), for counting accepted leaves as they stand."""
    found: dict[str, list[str]] = {}
    for name in sorted(view.list_dir(LEAVES_DIR)):
        if not name.endswith(RESULT_SUFFIX):
            continue
        leaf_id = name[: -len(RESULT_SUFFIX)]
        try:
            result = json.loads(view.read(f"{LEAVES_DIR}/{name}") or b"")
        except ValueError:
            continue
        if not isinstance(result, dict) or not isinstance(result.get("operator"), str):
            continue
        commit = result.get("commit")
        if fate(view, leaf_id, str(result.get("outcome")), commit if isinstance(commit, str) else None,
                landed) == "reverted":
            found.setdefault(result["operator"], []).append(leaf_id)
    return found
