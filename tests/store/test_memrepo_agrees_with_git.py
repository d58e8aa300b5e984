"""The in-memory repository (tests/support/memrepo.py) against ProjectRepo on random writes: the
same tree, commit and blob ids, the same conflicts, the same reads, listings, walks, ancestry and
changed paths, so a test run on it is a test of what git would have held."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.memrepo import MemRepo, object_id
from verifier.errors import ConflictError
from verifier.patch.apply import git_blob_id
from verifier.store.gitrepo import VERIFIER, Person, ProjectRepo
from verifier.store.repository import ProjectRepository

# Names that sort differently as a file and as a folder ("a" < "a-b" < "a.b" < "a/" < "a0").
NAMES = ["a", "a-b", "a.b", "a0", "b"]
PATHS = st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map("/".join)
CONTENT = st.one_of(st.none(), st.binary(max_size=8))
WRITE_SETS = st.lists(st.dictionaries(PATHS, CONTENT, min_size=1, max_size=5), min_size=1, max_size=6)
AUTHOR = Person("Agent Ä", "agent@agents.researchwiki.invalid")
T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _same_trees(mem: MemRepo, git: ProjectRepo, rev: str) -> None:
    ours, theirs = mem.view(rev), git.view(rev)
    files = sorted(theirs.walk())
    assert sorted(ours.walk()) == files
    for path in files:
        assert ours.read(path) == theirs.read(path)
        assert ours.blob_id(path) == theirs.blob_id(path)
        assert ours.file_mode(path) == theirs.file_mode(path) == 0o100644
    folders = {""} | {path.rsplit("/", 1)[0] for path in files if "/" in path}
    for folder in folders | {"a", "a/b", "missing"}:
        assert ours.list_dir(folder) == theirs.list_dir(folder)
        assert ours.is_dir(folder) == theirs.is_dir(folder)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(write_sets=WRITE_SETS)
def test_the_memory_repository_builds_what_git_builds(write_sets: list[dict[str, bytes | None]]) -> None:
    mem = MemRepo()
    with tempfile.TemporaryDirectory() as folder:
        git = ProjectRepo.create(Path(folder) / "p.git")
        surfaces: list[ProjectRepository] = [mem, git]  # both are the surface the writer uses
        assert len(surfaces) == 2
        tips: list[str] = []
        for step, writes in enumerate(write_sets):
            base = git.tip()
            try:
                tree = git.build_tree(base, writes)
            except ConflictError:
                try:
                    mem.build_tree(base, writes)
                except ConflictError:
                    continue
                raise AssertionError(f"git refused {writes} over {base}, the memory repository did not") from None
            assert mem.build_tree(base, writes) == tree
            when = T0 + timedelta(minutes=step)
            commit = git.create_commit(tree=tree, parents=[base] if base else [], author=AUTHOR, committer=VERIFIER,
                                       message=f"step {step}\n\nwrites {sorted(writes)}\n", when=when)
            assert mem.create_commit(tree=tree, parents=[base] if base else [], author=AUTHOR, committer=VERIFIER,
                                     message=f"step {step}\n\nwrites {sorted(writes)}\n", when=when) == commit
            git.move_branch(commit, base)
            mem.move_branch(commit, base)
            assert mem.tip() == git.tip() == commit
            _same_trees(mem, git, commit)
            tips.append(commit)
        for older in tips:
            for newer in tips:
                assert mem.is_ancestor(older, newer) == git.is_ancestor(older, newer)
                assert mem.changed_paths(older, newer) == git.changed_paths(older, newer)


def test_object_ids_are_gits_own() -> None:
    assert object_id("blob", b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    assert object_id("tree", b"") == "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
    assert object_id("blob", b"hello\n") == git_blob_id(b"hello\n")


def test_a_branch_moved_under_the_writer_is_refused_by_compare_and_swap() -> None:
    mem = MemRepo()
    tree = mem.build_tree(None, {"a": b"1"})
    first = mem.create_commit(tree=tree, parents=[], author=AUTHOR, committer=VERIFIER, message="one\n", when=T0)
    mem.move_branch(first, None)
    second = mem.create_commit(tree=tree, parents=[first], author=AUTHOR, committer=VERIFIER, message="two\n",
                               when=T0)
    try:
        mem.move_branch(second, None)
    except ConflictError as exc:
        assert "moved" in str(exc)
    else:
        raise AssertionError("a stale expected tip moved the branch")
    assert mem.tip() == first
