"""ProjectRepo.is_ancestor remembers what it found (the latest descendant of each ancestor): on
random branching histories, asked in any order, it answers what libgit2 answers afresh."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier.store.gitrepo import VERIFIER, ProjectRepo

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
# Each commit names its parents by index among the commits before it (none: a new root).
HISTORIES = st.lists(st.lists(st.integers(min_value=0, max_value=30), max_size=2), min_size=2, max_size=14)
QUERIES = st.lists(st.tuples(st.integers(min_value=0, max_value=40), st.integers(min_value=0, max_value=40)),
                   min_size=1, max_size=60)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=HISTORIES, queries=QUERIES)
def test_remembered_ancestry_answers_what_git_answers(history: list[list[int]],
                                                      queries: list[tuple[int, int]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        repo = ProjectRepo.create(Path(folder) / "p.git")
        commits: list[str] = []
        for step, parents in enumerate(history):
            named = sorted({commits[index % len(commits)] for index in parents}) if commits else []
            tree = repo.build_tree(None, {"n": str(step).encode()})
            commits.append(repo.create_commit(tree=tree, parents=named, author=VERIFIER, committer=VERIFIER,
                                              message=f"step {step}\n", when=T0 + timedelta(minutes=step)))
        for a, d in queries:
            ancestor, descendant = commits[a % len(commits)], commits[d % len(commits)]
            fresh = ancestor == descendant or bool(ProjectRepo(repo.path).repo.descendant_of(descendant, ancestor))
            assert repo.is_ancestor(ancestor, descendant) == fresh, (a, d)


def test_an_unknown_commit_is_no_ancestor() -> None:
    with tempfile.TemporaryDirectory() as folder:
        repo = ProjectRepo.create(Path(folder) / "p.git")
        tree = repo.build_tree(None, {"n": b"0"})
        first = repo.create_commit(tree=tree, parents=[], author=VERIFIER, committer=VERIFIER, message="0\n", when=T0)
        assert repo.is_ancestor(first, first)
        assert not repo.is_ancestor("0" * 40, first)
        assert not repo.is_ancestor(first, "1" * 40)
