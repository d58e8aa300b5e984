"""Large blobs read through a GitTree are kept by id for the process (store.gitrepo._LargeBlobs):
a read always gives the bytes of the tree it was asked of, and what is kept stays within its
budget."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pygit2

from verifier.store.gitrepo import _LARGE_BLOB_BYTES, VERIFIER, ProjectRepo, _LargeBlobs

T0 = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def _commit(repo: ProjectRepo, parent: str | None, writes: dict[str, bytes | None]) -> str:
    tree = repo.build_tree(parent, writes)
    return repo.create_commit(tree=tree, parents=[parent] if parent else [], author=VERIFIER, committer=VERIFIER,
                              message="m", when=T0)


def test_a_large_file_read_again_and_after_an_edit_gives_each_trees_bytes(tmp_path: Path) -> None:
    repo = ProjectRepo.create(tmp_path / "p.git")
    first_bytes = b"row\n" * (_LARGE_BLOB_BYTES // 2)
    first = _commit(repo, None, {"ledger/000000.jsonl": first_bytes})
    assert repo.view(first).read("ledger/000000.jsonl") == first_bytes
    assert repo.view(first).read("ledger/000000.jsonl") == first_bytes  # the kept copy
    edited_bytes = first_bytes + b"another row\n"
    edited = _commit(repo, first, {"ledger/000000.jsonl": edited_bytes})
    assert repo.view(edited).read("ledger/000000.jsonl") == edited_bytes
    assert repo.view(first).read("ledger/000000.jsonl") == first_bytes


def test_kept_blobs_stay_within_the_budget_and_a_huge_one_is_not_kept() -> None:
    kept = _LargeBlobs(budget_bytes=8 * 1000)
    ids = [pygit2.Oid(hex=f"{n:040x}") for n in range(1, 12)]
    for oid in ids[:10]:
        kept.put(oid, b"x" * 1000)
    assert kept.get(ids[0]) is None and kept.get(ids[1]) is None  # the oldest made room
    assert all(kept.get(oid) == b"x" * 1000 for oid in ids[2:10])
    kept.put(ids[10], b"y" * 1001)  # over an eighth of the budget: read, never kept
    assert kept.get(ids[10]) is None
