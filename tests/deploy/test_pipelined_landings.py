"""The service's landings on a git host (verifier.deploy.pipelined): a group's publish runs while the
next group is judged, and nobody is answered before the publish of their group returned."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import pytest

from verifier.deploy.pipelined import PipelinedLandings
from verifier.errors import RetryableError

WAIT_S = 60.0  # generous: only a broken queue takes this long


class Publishes:
    """What a group's landing asks to publish, collected per thread (publishing.held_back's part)."""

    def __init__(self) -> None:
        self.local = threading.local()

    @contextmanager
    def hold_back(self) -> Iterator[list[Callable[[], None]]]:
        self.local.pending = []
        try:
            yield self.local.pending
        finally:
            self.local.pending = None

    def ask(self, publish: Callable[[], None]) -> None:
        self.local.pending.append(publish)


def _in_thread(call: Callable[[], object]) -> tuple[threading.Thread, list[object]]:
    out: list[object] = []

    def run() -> None:
        try:
            out.append(call())
        except BaseException as exc:  # the answer, to be looked at by the test
            out.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


def test_the_next_group_is_judged_and_answered_while_the_one_before_is_still_publishing() -> None:
    publishes = Publishes()
    landings: PipelinedLandings[str, str] = PipelinedLandings(max_group=8, hold_back=publishes.hold_back)
    pushing, pushed = threading.Event(), threading.Event()
    judged: list[list[str]] = []

    def slow_push() -> None:
        pushing.set()
        assert pushed.wait(WAIT_S)

    def land_group(jobs: Sequence[str]) -> list[str]:
        judged.append(list(jobs))
        publishes.ask(slow_push if jobs == ["first"] else lambda: None)
        return [f"landed {job}" for job in jobs]

    first, first_out = _in_thread(lambda: landings.land("p", "first", land_group))
    assert pushing.wait(WAIT_S)
    assert first_out == []  # staged, its push under way: not answered
    second, second_out = _in_thread(lambda: landings.land("p", "second", land_group))
    second.join(WAIT_S)
    assert second_out == ["landed second"] and first_out == []  # judged and answered meanwhile
    pushed.set()
    first.join(WAIT_S)
    assert first_out == ["landed first"]
    assert judged == [["first"], ["second"]]


def test_a_publish_that_fails_is_every_members_answer() -> None:
    publishes = Publishes()
    landings: PipelinedLandings[str, str] = PipelinedLandings(max_group=8, hold_back=publishes.hold_back)
    judging, go_on = threading.Event(), threading.Event()

    def refused() -> None:
        raise RetryableError("the host could not be reached; try again")

    def land_group(jobs: Sequence[str]) -> list[str]:
        if jobs == ["lead"]:
            judging.set()
            assert go_on.wait(WAIT_S)  # the others queue meanwhile, to land as one group
        else:
            publishes.ask(refused)
        return [f"landed {job}" for job in jobs]

    lead, lead_out = _in_thread(lambda: landings.land("p", "lead", land_group))
    assert judging.wait(WAIT_S)
    def one(job: str) -> Callable[[], str]:
        return lambda: landings.land("p", job, land_group)

    others = [_in_thread(one(job)) for job in ("a", "b")]
    while landings.waiting("p") < 2:  # both queued behind the group being judged
        threading.Event().wait(0.01)
    go_on.set()
    lead.join(WAIT_S)
    for thread, _ in others:
        thread.join(WAIT_S)
    assert lead_out == ["landed lead"]
    for _, out in others:
        assert len(out) == 1 and isinstance(out[0], RetryableError)
    assert landings.largest == 2


def test_an_exception_of_the_landing_is_every_members_answer() -> None:
    landings: PipelinedLandings[str, str] = PipelinedLandings(max_group=8, hold_back=Publishes().hold_back)

    def broken(jobs: Sequence[str]) -> list[str]:
        raise OSError("no space left on device")

    with pytest.raises(OSError, match="no space"):
        landings.land("p", "only", broken)
