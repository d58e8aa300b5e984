"""Group commit: the submissions that reach one project while it is landing wait, and then land together.

Every thread of a process that has an attempt ready for a project's writer (steps 1-3 done) puts it
on the project's queue. If no thread of the process is landing that project, it becomes the
leader: it takes every queued attempt (at most `max_group`), lands them as one group through
`land_group` (one writer opening, one history check, one publish: see pipeline.submit.land_group),
hands each attempt its own answer, and goes on with the attempts that queued meanwhile until its
own is answered. Then, if attempts are still waiting, the first of them leads next: no thread
lands others' work for long after its own is done, and none waits while nobody leads.

`land_group` answers every attempt of the group with a result or with the exception that attempt
raises; an exception out of `land_group` itself (the project's lock not had, a full disk while
publishing) is every member's answer, and then nothing of the group was acknowledged.

Several processes (the service's workers) each group their own attempts; the project's lock
(pipeline.writer) orders their groups. The state here is the process's: one `GroupCommit` per
process (the service's core holds one), never module-level.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

J = TypeVar("J")
R = TypeVar("R")

LandGroup = Callable[[Sequence[J]], Sequence["R | BaseException"]]


@dataclass(eq=False)
class Waiting(Generic[J, R]):
    """One attempt on a project's queue: its job, and the answer it is woken with."""

    job: J
    done: threading.Event = field(default_factory=threading.Event)
    lead: bool = False  # woken to lead, not answered
    result: R | None = None
    error: BaseException | None = None


@dataclass
class _Queue(Generic[J, R]):
    waiting: list[Waiting[J, R]] = field(default_factory=list)
    leading: bool = False


class GroupCommit(Generic[J, R]):
    """One process's landing queues, one per project key."""

    def __init__(self, *, max_group: int) -> None:
        if max_group < 1:
            raise ValueError("max_group must be at least 1")
        self.max_group = max_group
        self._lock = threading.Lock()
        self._queues: dict[str, _Queue[J, R]] = {}
        self.groups = 0  # groups landed, for the benchmarks and the tests
        self.largest = 0

    def land(self, key: str, job: J, land_group: LandGroup[J, R]) -> R:
        """Land `job` with whatever else is queued for `key`; its own result, or its own exception."""
        me: Waiting[J, R] = Waiting(job)
        with self._lock:
            queue = self._queues.setdefault(key, _Queue())
            queue.waiting.append(me)
            lead = not queue.leading
            queue.leading = True
        if not lead:
            me.done.wait()
            if not me.lead:
                return self._answer(me)
        self._lead(key, me, land_group)
        return self._answer(me)

    def _lead(self, key: str, me: Waiting[J, R], land_group: LandGroup[J, R]) -> None:
        queue = self._queues[key]
        while True:
            with self._lock:
                if (me.done.is_set() and not me.lead) or not queue.waiting:
                    self._hand_over(key, queue)
                    return
                group = self._take(queue)
            me.lead = False
            self._land(group, land_group)

    def waiting(self, key: str) -> int:
        """How many attempts wait for `key`'s next group (the tests, the benchmarks)."""
        with self._lock:
            queue = self._queues.get(key)
            return len(queue.waiting) if queue is not None else 0

    def _take(self, queue: _Queue[J, R]) -> list[Waiting[J, R]]:
        """Under the lock: the next group, the oldest waiting first."""
        group = queue.waiting[: self.max_group]
        del queue.waiting[: self.max_group]
        return group

    def _land(self, group: list[Waiting[J, R]], land_group: LandGroup[J, R]) -> None:
        self._settle(group, self._answers(group, land_group))

    @staticmethod
    def _answers(group: list[Waiting[J, R]], land_group: LandGroup[J, R]) -> Sequence[R | BaseException]:
        """Each member's answer from `land_group`: an exception out of it is every member's."""
        try:
            answers: Sequence[R | BaseException] = land_group([waiting.job for waiting in group])
            if len(answers) != len(group):
                raise RuntimeError(f"land_group answered {len(answers)} of {len(group)} attempts")
        except BaseException as exc:  # every member's answer, re-raised in its own thread
            answers = [exc] * len(group)
        return answers

    def _settle(self, group: list[Waiting[J, R]], answers: Sequence[R | BaseException]) -> None:
        """Hand each member its answer (and count the group)."""
        with self._lock:
            self.groups += 1
            self.largest = max(self.largest, len(group))
        for waiting, answer in zip(group, answers, strict=True):
            if isinstance(answer, BaseException):
                waiting.error = answer
            else:
                waiting.result = answer
            waiting.done.set()

    def _hand_over(self, key: str, queue: _Queue[J, R]) -> None:
        """Under the lock: the first waiting attempt leads next, or nobody leads an empty queue."""
        if queue.waiting:
            nxt = queue.waiting[0]
            nxt.lead = True
            nxt.done.set()
        else:
            queue.leading = False
            del self._queues[key]

    @staticmethod
    def _answer(me: Waiting[J, R]) -> R:
        if me.error is not None:
            raise me.error
        assert me.result is not None
        return me.result
