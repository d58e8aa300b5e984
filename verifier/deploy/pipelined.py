"""The service's landings when its projects are on a git host: group commit (as
verifier.pipeline.group) with each group's push pipelined with the next group's judging in the
same process.

With pipeline.group a leader lands its group (judged and staged under the writer's lock, then
published by verifier.deploy.publishing: the push and main caught up) before the next leader of
the process starts, so a project's next group waited for the whole push of the one before.
Here the leader judges and stages its group with the publish held back
(`publishing.held_back`), hands the lead to the first attempt waiting, and only then publishes:
the next group is judged while this one is pushed (and a push that finds it under the writer's
lock waits for it to be staged and carries it too).

What stays: nothing is acknowledged before it is published, since a member's answer is set only
once its group's publish returned, and a publish that raises is every member's answer (nothing of
the group acknowledged), as pipeline.group has it. Groups are judged in arrival order (the next
leader is the oldest waiting attempt, and it takes the writer's lock after this group let it go).
A leader lands its own group only: no thread lands others' work after its own is done.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from verifier.deploy.publishing import held_back
from verifier.pipeline.group import GroupCommit, LandGroup

J = TypeVar("J")
R = TypeVar("R")
HoldBack = Callable[[], AbstractContextManager[list[Callable[[], None]]]]


@dataclass(eq=False)
class _Slot(Generic[J, R]):
    job: J
    woken: threading.Event = field(default_factory=threading.Event)
    lead: bool = False  # woken to lead, not answered
    result: R | None = None
    error: BaseException | None = None

    def answer(self) -> R:
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


@dataclass
class _Queue(Generic[J, R]):
    waiting: list[_Slot[J, R]] = field(default_factory=list)
    leading: bool = False


class PipelinedLandings(GroupCommit[J, R]):
    """One process's landing queues, one per project key (the interface of GroupCommit).
    `hold_back` collects the publishes a group's landing asks for (publishing's, in the service)."""

    def __init__(self, *, max_group: int, hold_back: HoldBack = held_back) -> None:
        super().__init__(max_group=max_group)
        self._hold_back = hold_back
        self._guard = threading.Lock()
        self._waiting: dict[str, _Queue[J, R]] = {}

    def land(self, key: str, job: J, land_group: LandGroup[J, R]) -> R:
        """Land `job` with whatever else is queued for `key`; its own result, or its own exception."""
        me: _Slot[J, R] = _Slot(job)
        with self._guard:
            queue = self._waiting.setdefault(key, _Queue())
            queue.waiting.append(me)
            lead = not queue.leading
            queue.leading = True
        if not lead:
            me.woken.wait()
            if not me.lead:
                return me.answer()
        with self._guard:  # the leader is the oldest waiting: its group holds it
            group = queue.waiting[: self.max_group]
            del queue.waiting[: self.max_group]
        answers, publishes = self._judge(group, land_group)
        with self._guard:
            if queue.waiting:
                nxt = queue.waiting[0]
                nxt.lead = True
                nxt.woken.set()
            else:
                queue.leading = False
                del self._waiting[key]
        self._publish_and_answer(group, answers, publishes)
        return me.answer()

    def waiting(self, key: str) -> int:
        """How many attempts wait for `key`'s next group (the tests, the benchmarks)."""
        with self._guard:
            queue = self._waiting.get(key)
            return len(queue.waiting) if queue is not None else 0

    def _judge(self, group: list[_Slot[J, R]], land_group: LandGroup[J, R]
               ) -> tuple[Sequence[R | BaseException], list[Callable[[], None]]]:
        """The group judged and staged; its answers, and the publishes held back meanwhile."""
        with self._hold_back() as publishes:
            try:
                answers: Sequence[R | BaseException] = land_group([slot.job for slot in group])
                if len(answers) != len(group):
                    raise RuntimeError(f"land_group answered {len(answers)} of {len(group)} attempts")
            except BaseException as exc:  # every member's answer, re-raised in its own thread
                answers = [exc] * len(group)
        return answers, publishes

    def _publish_and_answer(self, group: list[_Slot[J, R]], answers: Sequence[R | BaseException],
                            publishes: list[Callable[[], None]]) -> None:
        try:
            for publish in publishes:
                publish()
        except BaseException as exc:  # not published: nothing of the group is acknowledged
            answers = [exc] * len(group)
        with self._guard:
            self.groups += 1
            self.largest = max(self.largest, len(group))
        for slot, answer in zip(group, answers, strict=True):
            if isinstance(answer, BaseException):
                slot.error = answer
            else:
                slot.result = answer
            slot.woken.set()
