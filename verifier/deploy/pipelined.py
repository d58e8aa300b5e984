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

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TypeVar

from verifier.deploy.publishing import held_back
from verifier.pipeline.group import GroupCommit, LandGroup, Waiting

J = TypeVar("J")
R = TypeVar("R")
HoldBack = Callable[[], AbstractContextManager[list[Callable[[], None]]]]


class PipelinedLandings(GroupCommit[J, R]):
    """One process's landing queues, one per project key (GroupCommit's, but each leader lands
    one group and hands the lead on before it publishes). `hold_back` collects the publishes a
    group's landing asks for (publishing's, in the service)."""

    def __init__(self, *, max_group: int, hold_back: HoldBack = held_back) -> None:
        super().__init__(max_group=max_group)
        self._hold_back = hold_back

    def _lead(self, key: str, me: Waiting[J, R], land_group: LandGroup[J, R]) -> None:
        queue = self._queues[key]
        with self._lock:  # the leader is the oldest waiting: its group holds it
            group = self._take(queue)
        me.lead = False
        with self._hold_back() as publishes:  # judged and staged, the publishes held back
            answers = self._answers(group, land_group)
        with self._lock:
            self._hand_over(key, queue)  # the next group is judged while this one publishes
        try:
            for publish in publishes:
                publish()
        except BaseException as exc:  # not published: nothing of the group is acknowledged
            answers = [exc] * len(group)
        self._settle(group, answers)
