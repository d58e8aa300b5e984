"""ProjectRepo.changes, the notifier's walk over only the subtrees that differ, against libgit2's
own tree diff on random histories: the same files, statuses and blob ids under every folder,
including a file replaced by a folder of the same name and a folder emptied away."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pygit2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier.errors import ConflictError
from verifier.store.gitrepo import VERIFIER, Change, ProjectRepo

NAMES = ["a", "a-b", "a.b", "a0", "b"]  # sort differently as a file and as a folder
PATHS = st.lists(st.sampled_from(NAMES), min_size=2, max_size=4).map("/".join)
CONTENT = st.one_of(st.none(), st.binary(max_size=6))
WRITE_SETS = st.lists(st.dictionaries(PATHS, CONTENT, min_size=1, max_size=6), min_size=2, max_size=6)
T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
ZERO = "0" * 40


def _libgit2(repo: ProjectRepo, before: str | None, after: str, folder: str) -> list[Change]:
    def subtree(commit: str | None) -> pygit2.Tree | None:
        if commit is None:
            return None
        try:
            node = repo.repo[repo.commit(commit).tree[folder].id]
        except KeyError:
            return None
        return node if isinstance(node, pygit2.Tree) else None

    old, new = subtree(before), subtree(after)
    if old is None and new is None:
        return []
    if old is None:
        assert new is not None
        diff = new.diff_to_tree(swap=True)
    elif new is None:
        diff = old.diff_to_tree()
    else:
        diff = old.diff_to_tree(new)
    out = []
    for delta in diff.deltas:
        old_id, new_id = str(delta.old_file.id), str(delta.new_file.id)
        out.append((delta.status_char(), f"{folder}/{delta.new_file.path or delta.old_file.path}",
                    None if old_id == ZERO else old_id, None if new_id == ZERO else new_id))
    return sorted(out)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(write_sets=WRITE_SETS)
def test_changes_under_a_folder_are_what_gits_diff_finds(write_sets: list[dict[str, bytes | None]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        repo = ProjectRepo.create(Path(folder) / "p.git")
        tips: list[str | None] = [None]
        for step, writes in enumerate(write_sets):
            base = repo.tip()
            try:
                tree = repo.build_tree(base, writes)
            except ConflictError:
                continue
            commit = repo.create_commit(tree=tree, parents=[base] if base else [], author=VERIFIER,
                                        committer=VERIFIER, message=f"step {step}\n",
                                        when=T0 + timedelta(minutes=step))
            repo.move_branch(commit, base)
            tips.append(commit)
        for before in tips:
            for after in tips[1:]:
                assert after is not None
                for top in [*NAMES, "missing"]:
                    assert sorted(repo.changes(before, after, top)) == _libgit2(repo, before, after, top)


def test_a_file_in_place_of_the_folder_is_no_folder() -> None:
    with tempfile.TemporaryDirectory() as folder:
        repo = ProjectRepo.create(Path(folder) / "p.git")
        first = repo.create_commit(tree=repo.build_tree(None, {"a": b"file"}), parents=[], author=VERIFIER,
                                   committer=VERIFIER, message="one\n", when=T0)
        second = repo.create_commit(tree=repo.build_tree(None, {"a/x": b"nested"}), parents=[first],
                                    author=VERIFIER, committer=VERIFIER, message="two\n", when=T0)
        (added,) = repo.changes(first, second, "a")
        assert added[:2] == ("A", "a/x") and added[2] is None
        assert repo.changes(second, first, "a") == [("D", "a/x", added[3], None)]
