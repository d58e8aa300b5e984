"""The notifier's passes run after the answer, in the background (verifier.service.notifying): the
answer never waits for them, no landing goes untold (a pass asked for while one runs runs again,
a failed one is tried again), and the service's message reads see what it answered before."""

from __future__ import annotations

import threading

from tests.support.service_harness import distinct_findings, live_leaf
from tests.support.world import NOW, SLUG, World
from verifier.service.config import ServiceConfig
from verifier.service.core import Service, clock
from verifier.service.notifying import NotifyQueue

WAIT_S = 60.0  # generous: only a broken queue takes this long


def test_a_pass_asked_for_while_one_runs_runs_again_after_it() -> None:
    running, release = threading.Event(), threading.Event()
    passes: list[str] = []

    def catch_up(slug: str) -> None:
        passes.append(slug)
        running.set()
        assert release.wait(WAIT_S)

    queue = NotifyQueue(catch_up)
    queue.ask("p-1")
    assert running.wait(WAIT_S)
    queue.ask("p-1")  # landed while the first pass runs: that pass may have read the ledger already
    queue.ask("p-1")  # and again: still one more pass, not two
    assert not queue.wait(0.05)  # the passes asked for have not run yet
    release.set()
    assert queue.wait(WAIT_S)
    assert passes == ["p-1", "p-1"]
    assert queue.close(WAIT_S)


def test_a_failed_pass_is_tried_again_until_it_runs() -> None:
    attempts: list[str] = []

    def catch_up(slug: str) -> None:
        attempts.append(slug)
        if len(attempts) < 3:
            raise ConnectionError("the Commons is away")

    queue = NotifyQueue(catch_up, retry_s=0.01)
    queue.ask("p-1")
    assert queue.wait(WAIT_S)  # done only once a pass ran through
    assert attempts == ["p-1", "p-1", "p-1"]
    assert queue.close(WAIT_S)


def test_every_project_asked_for_gets_its_pass() -> None:
    seen: list[str] = []
    queue = NotifyQueue(seen.append)
    for slug in ("p-1", "p-2", "p-1", "p-3"):
        queue.ask(slug)
    assert queue.close(WAIT_S)
    assert set(seen) == {"p-1", "p-2", "p-3"}


def test_the_answer_does_not_wait_for_the_notifier_and_a_thread_read_sees_its_messages(world: World) -> None:
    service = Service(ServiceConfig(home=world.home.root))
    service.notifier.catch_up(SLUG, now=NOW)  # as start-up does: the past is read silently
    gate = threading.Event()

    def held_back(slug: str) -> None:  # the real notifier, after the gate opens
        assert gate.wait(WAIT_S)
        service.notifier.landed(slug, clock)

    service.notifying = NotifyQueue(held_back)
    live_leaf(world.home, "told-1")
    actor = world.home.identities.authenticate(world.agent.token)
    submission = world.creation("told-1", distinct_findings(world.agent, "told-1", 0))
    answer = service.submit(actor, world.agent.token, SLUG, "told-1", submission.bundle, submission.patch, None)
    assert answer.body["verdict"]["outcome"] == "accepted"  # answered while the notifier is held back
    assert service.commons.thread(SLUG, "told-1") == []
    gate.set()
    thread = service.thread(SLUG, "told-1", 0, 100)["messages"]  # waits for the pass of that verdict
    assert [m["body"].split(" ")[0] for m in thread] == ["ACCEPTED"]
    assert [m["kind"] for m in service.inbox(actor, 0, 100)["messages"]] == ["first_minute"]
    service.close(WAIT_S)


def test_a_read_on_another_process_sees_the_messages_of_a_verdict_not_yet_told(world: World) -> None:
    """Two worker processes of one home: the one that answered the verdict has not told Commons
    yet (its pass held back); the other's thread and inbox reads pass the project themselves."""
    answering, reading = Service(ServiceConfig(home=world.home.root)), Service(ServiceConfig(home=world.home.root))
    answering.notifier.catch_up(SLUG, now=NOW)  # as start-up does: the past is read silently
    gate = threading.Event()
    answering.notifying = NotifyQueue(lambda slug: gate.wait(WAIT_S))  # never tells: the other must
    live_leaf(world.home, "told-2")
    actor = world.home.identities.authenticate(world.agent.token)
    submission = world.creation("told-2", distinct_findings(world.agent, "told-2", 0))
    answer = answering.submit(actor, world.agent.token, SLUG, "told-2", submission.bundle, submission.patch, None)
    assert answer.body["verdict"]["outcome"] == "accepted"
    assert reading.notifier.behind() == [SLUG]
    assert [m["kind"] for m in reading.inbox(actor, 0, 100)["messages"]] == ["first_minute"]
    thread = reading.thread(SLUG, "told-2", 0, 100)["messages"]
    assert [m["body"].split(" ")[0] for m in thread] == ["ACCEPTED"]
    assert reading.notifier.behind() == []
    gate.set()
    answering.close(WAIT_S)
    reading.close(WAIT_S)
