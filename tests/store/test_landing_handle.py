"""The landing handle (store.gitrepo.landing_handle): inside it a thread's open_repo is the
process's one handle on the repository, handed from thread to thread (one holder at a time);
outside it each thread keeps its own; and what a handle learns of ancestry every handle knows."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from verifier.store.gitrepo import VERIFIER, ProjectRepo, landing_handle, open_repo

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
JOIN_S = 30
T = TypeVar("T")


def _other_thread(job: Callable[[], T]) -> T:
    out: list[T] = []
    thread = threading.Thread(target=lambda: out.append(job()))
    thread.start()
    thread.join(JOIN_S)
    assert not thread.is_alive()
    return out[0]


def test_every_holder_of_the_landing_handle_gets_the_same_repository(tmp_path: Path) -> None:
    path = tmp_path / "p.git"
    ProjectRepo.create(path)

    def held() -> ProjectRepo:
        with landing_handle(path), landing_handle(path):  # held already by this thread: no wait on itself
            return open_repo(path)

    first, second = held(), _other_thread(held)
    assert first is second
    assert open_repo(path) is not first and _other_thread(lambda: open_repo(path)) is not first


def test_a_second_thread_waits_while_the_landing_handle_is_held(tmp_path: Path) -> None:
    path = tmp_path / "p.git"
    ProjectRepo.create(path)
    entered, order = threading.Event(), []

    def other() -> None:
        entered.wait(JOIN_S)
        with landing_handle(path):
            order.append("other")

    thread = threading.Thread(target=other)
    thread.start()
    with landing_handle(path):
        entered.set()
        thread.join(0.2)  # it cannot get in while this thread holds the handle
        order.append("me")
    thread.join(JOIN_S)
    assert order == ["me", "other"]


def test_what_one_threads_handle_learns_of_ancestry_the_others_know(tmp_path: Path) -> None:
    path = tmp_path / "p.git"
    repo = ProjectRepo.create(path)
    tree = repo.build_tree(None, {"a.txt": b"a"})
    base = repo.create_commit(tree=tree, parents=[], author=VERIFIER, committer=VERIFIER, message="base", when=T0)
    tip = repo.create_commit(tree=tree, parents=[base], author=VERIFIER, committer=VERIFIER, message="tip", when=T0)
    assert open_repo(path).is_ancestor(base, tip)
    other = _other_thread(lambda: open_repo(path))
    assert other._known.descends.get(base) == tip
