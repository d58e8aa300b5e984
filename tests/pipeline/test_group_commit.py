"""Group commit: attempts that reach a landing project land together, each as its own contribution
and ledger row in order, with one publish; one attempt's refusal holds back none of the others;
nothing is answered before the group is published, and a crash of the group's publish keeps
nothing of it."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.support.service_harness import distinct_findings
from tests.support.world import NOW, SLUG, World, make_world
from verifier.audits.audit import verify_ledger
from verifier.audits.replay import replay
from verifier.pipeline.group import GroupCommit
from verifier.pipeline.ledger import read_chain
from verifier.pipeline.submit import Ready, Submission, land_group, prepare
from verifier.pipeline.verdict import Verdict
from verifier.pipeline.writer import ledger_commit_row
from verifier.state.layout import USE_SCORES, USE_SHARD_ROOT, leaf_result_path

JOIN_S = 60  # a thread left waiting is a bug: fail instead of hanging the suite


# the queue, alone -------------------------------------------------------------------------------

def _run_all(group: GroupCommit[int, int], jobs: list[int], land: object) -> dict[int, int | BaseException]:
    answers: dict[int, int | BaseException] = {}

    def one(job: int) -> None:
        try:
            answers[job] = group.land("p", job, land)  # type: ignore[arg-type]
        except Exception as exc:
            answers[job] = exc

    threads = [threading.Thread(target=one, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(JOIN_S)
        assert not thread.is_alive(), "an attempt was never answered"
    return answers


def test_attempts_queued_behind_a_landing_land_as_one_group() -> None:
    group: GroupCommit[int, int] = GroupCommit(max_group=32)
    first_started, release = threading.Event(), threading.Event()
    groups: list[list[int]] = []

    def land(jobs: Sequence[int]) -> list[int | BaseException]:
        groups.append(list(jobs))
        if len(groups) == 1:
            first_started.set()
            assert release.wait(JOIN_S)
        return [job * 10 for job in jobs]

    leader = threading.Thread(target=lambda: group.land("p", 0, land))
    leader.start()
    assert first_started.wait(JOIN_S)
    answers: dict[int, int | BaseException] = {}
    waiting = [threading.Thread(target=lambda job=job: answers.__setitem__(job, group.land("p", job, land)))
               for job in range(1, 6)]
    for thread in waiting:
        thread.start()
    while sum(len(q.waiting) for q in group._queues.values()) < 5:  # all five queued behind the landing
        threading.Event().wait(0.01)
    release.set()
    for thread in [leader, *waiting]:
        thread.join(JOIN_S)
        assert not thread.is_alive()
    assert groups == [[0], [1, 2, 3, 4, 5]]
    assert answers == {job: job * 10 for job in range(1, 6)}


def test_one_attempts_exception_is_only_its_own_answer() -> None:
    group: GroupCommit[int, int] = GroupCommit(max_group=4)

    def land(jobs: Sequence[int]) -> list[int | BaseException]:
        return [ValueError(f"job {job} refused") if job % 3 == 0 else job for job in jobs]

    answers = _run_all(group, list(range(1, 13)), land)
    for job, answer in answers.items():
        if job % 3 == 0:
            assert isinstance(answer, ValueError) and str(answer) == f"job {job} refused"
        else:
            assert answer == job
    assert group.largest <= 4 and not group._queues  # bounded groups, and nobody left leading


def test_a_failed_group_answers_every_member_with_the_failure() -> None:
    group: GroupCommit[int, int] = GroupCommit(max_group=32)

    def land(jobs: Sequence[int]) -> list[int | BaseException]:
        raise OSError("disk full")

    answers = _run_all(group, list(range(8)), land)
    assert all(isinstance(answer, OSError) for answer in answers.values())
    assert not group._queues


def test_a_group_of_one_is_never_bigger_than_asked() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        GroupCommit(max_group=0)


# on a real project ------------------------------------------------------------------------------

def _three(world: World) -> list[Submission]:
    """Two good extract submissions around one whose excerpt is not in its source."""
    for leaf_id in ("group-a", "group-b", "group-c"):
        world.leaf(leaf_id)
    good_a = world.creation("group-a", distinct_findings(world.agent, "group-a", 0))
    bad = world.extract("group-b", "extract-bad-excerpt.yaml")
    good_c = world.creation("group-c", distinct_findings(world.agent, "group-c", 3))
    return [good_a, bad, good_c]


def _count_steps(world: World) -> list[str]:
    """Every durable step the home's writers take, in order (bare repositories keep no reflog)."""
    steps: list[str] = []
    world.home.crash_point = steps.append
    return steps


def test_a_group_lands_each_attempt_in_order_with_one_branch_move(world: World) -> None:
    submissions = _three(world)
    before, steps = world.tip(), _count_steps(world)
    ready = [prepare(world.home, s, now=NOW, fetcher=world.fetcher) for s in submissions]
    verdicts = land_group(world.home, SLUG, ready)
    assert [getattr(v, "outcome", v) for v in verdicts] == ["accepted", "rejected", "accepted"]
    assert steps.count("branch") == steps.count("anchor") == 1  # one branch move and one anchor for the group
    assert steps.count("ledger") == 3  # and a ledger commit for each attempt
    rows = [row for _, row in read_chain(world.repo.view(world.tip()))]
    assert [(row.leaf_id, row.outcome) for row in rows[-3:]] == [
        ("group-a", "accepted"), ("group-b", "rejected"), ("group-c", "accepted")]
    # each accepted attempt is its own contribution commit, authored by the agent, on the one line
    commits = [world.repo.commit(row.commit) for row in rows[-3:] if row.commit]
    assert [c.author.name for c in commits] == ["agent-a", "agent-a"]
    assert world.repo.is_ancestor(before, str(commits[0].id))
    assert world.repo.is_ancestor(str(commits[0].id), str(commits[1].id))
    assert verify_ledger(world.repo, world.home.read_anchor(SLUG)).ok


def test_a_crash_of_the_groups_publish_keeps_none_of_it(world: World) -> None:
    submissions = _three(world)
    armed = ["branch"]

    def crash(step: str) -> None:
        if step in armed:
            armed.remove(step)
            raise RuntimeError("injected crash before branch")

    world.home.crash_point = crash
    tip = world.tip()
    ready: list[Ready] = [prepare(world.home, s, now=NOW, fetcher=world.fetcher) for s in submissions]
    verdicts = land_group(world.home, SLUG, ready)
    assert [getattr(v, "outcome", v) for v in verdicts] == ["crash", "crash", "crash"]
    rows = [row for _, row in read_chain(world.repo.view(world.tip()))]
    assert [(row.outcome, row.commit) for row in rows[-3:]] == [("crash", None)] * 3
    assert world.repo.changed_paths(tip, world.tip()) == ["ledger/000000.jsonl"]  # no contribution kept
    assert verify_ledger(world.repo, world.home.read_anchor(SLUG)).ok
    world.home.crash_point = lambda _step: None
    assert [world.submit(s).outcome for s in submissions] == ["accepted", "rejected", "accepted"]


def test_a_group_writes_its_bookkeeping_once_in_its_last_ledger_commit(world: World, tmp_path: Path) -> None:
    alone = make_world(tmp_path / "alone")  # the same attempts landed one by one, for the state they leave
    submissions, one_by_one = _three(world), _three(alone)
    before = world.tip()
    verdicts = land_group(world.home, SLUG, [prepare(world.home, s, now=NOW, fetcher=world.fetcher)
                                             for s in submissions])
    assert [v.outcome for v in verdicts if isinstance(v, Verdict)] == ["accepted", "rejected", "accepted"]
    assert [alone.submit(s).outcome for s in one_by_one] == ["accepted", "rejected", "accepted"]
    chain, commit = [], world.repo.commit(world.tip())
    while str(commit.id) != before:
        chain.append(commit)
        commit = commit.parents[0]
    ledger_commits = [c for c in reversed(chain) if ledger_commit_row(c) is not None]
    assert len(ledger_commits) == 3
    # The first two ledger commits carry their rows in their messages and change no file but
    # their use-score shards (each row's own use moves, for the notifier): the ledger, the other
    # scores and the leaf results are written once, by the last.
    for made in ledger_commits[:2]:
        changed = world.repo.changed_paths(str(made.parents[0].id), str(made.id))
        assert all(path.startswith(f"{USE_SHARD_ROOT}/") for path in changed), changed
    last = world.repo.changed_paths(str(ledger_commits[2].parents[0].id), str(ledger_commits[2].id))
    assert "ledger/000000.jsonl" in last and leaf_result_path("group-a") in last
    # Each verdict names a ledger commit on the branch; the last names the published tip.
    assert [v.tip for v in verdicts if isinstance(v, Verdict)] == [str(c.id) for c in ledger_commits]
    assert verdicts[-1].tip == world.tip() == world.home.read_anchor(SLUG).commit  # type: ignore[union-attr]
    # What the group leaves is what landing one by one leaves: the same rows, scores and results.
    grouped, single = world.repo.view(world.tip()), alone.repo.view(alone.tip())
    assert grouped.blob_id(USE_SCORES) == single.blob_id(USE_SCORES) is not None
    assert sorted(grouped.walk(USE_SHARD_ROOT)) == sorted(single.walk(USE_SHARD_ROOT))
    for path in grouped.walk(USE_SHARD_ROOT):
        assert grouped.read(path) == single.read(path), path
    assert [(r.leaf_id, r.outcome) for _, r in read_chain(grouped)] == [(r.leaf_id, r.outcome)
                                                                        for _, r in read_chain(single)]
    for leaf_id in ("group-a", "group-b", "group-c"):
        assert (grouped.read(leaf_result_path(leaf_id)) is None) == (single.read(leaf_result_path(leaf_id)) is None)
    assert replay(world.repo, world.home.read_anchor(SLUG), check_anchor=True).ok
    assert verify_ledger(world.repo, world.home.read_anchor(SLUG)).ok


def test_a_group_of_one_writes_its_bookkeeping_in_its_own_ledger_commit(world: World) -> None:
    world.leaf("group-a")
    tip = world.tip()
    (verdict,) = land_group(world.home, SLUG, [prepare(world.home, world.extract("group-a"), now=NOW,
                                                       fetcher=world.fetcher)])
    assert isinstance(verdict, Verdict) and verdict.outcome == "accepted" and verdict.tip == world.tip()
    assert world.repo.commit(world.tip()).parents[0].id == world.repo.commit(verdict.commit or "").id
    assert "ledger/000000.jsonl" in world.repo.changed_paths(verdict.commit or "", world.tip())
    assert world.repo.is_ancestor(tip, world.tip())
