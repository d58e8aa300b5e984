"""The Commons on PostgreSQL at the remote pace (issue 26): each process's connections stay within
its pool's bound however many threads use it; message posts and the notifier's cursor take no
part of the one write lock (they run beside another writer in progress, and only posts to the
same inbox wait on each other); placement reads each instance's recent landings from the journal.
Against a throwaway cluster on loopback."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.support.servers import postgres_cluster
from tests.support.world import NOW, World
from verifier.commons import leases
from verifier.commons.adapter import OutgoingMessage
from verifier.commons.backend import commons_database
from verifier.commons.local import LocalCommons
from verifier.commons.pgdb import PgDatabase, shared_database
from verifier.deploy.placement import Load, place
from verifier.errors import RetryableError
from verifier.messages.outbox import deliver
from verifier.service.journal import Journal
from verifier.store.identities import FileIdentities

pytestmark = pytest.mark.slow  # a throwaway PostgreSQL cluster

THREADS = 24
_CLIENTS = ("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
            "AND datname = current_database()")


@pytest.fixture(scope="module")
def dsn() -> Iterator[str]:
    with postgres_cluster() as url:
        yield url


def _until(condition: Callable[[], bool], what: str, timeout_s: float = 60.0) -> None:
    """Wait for a state (not for a time): polls until `condition` holds; fails naming `what`."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"never saw: {what}"
        time.sleep(0.02)


def _advisory_waiters(dsn: str) -> int:
    db = PgDatabase(dsn, pool_size=1)
    try:
        return int(db.read("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")[0][0])
    finally:
        db.close()


class _Holder:
    """A write transaction of `scope` held open in its own thread until released (always, on exit)."""

    def __init__(self, dsn: str, scope: str | list[str] | None) -> None:
        self.release = threading.Event()
        holding = threading.Event()

        def run() -> None:
            db = PgDatabase(dsn, pool_size=1)
            try:
                with db.write(scope):
                    holding.set()
                    self.release.wait(120)
            finally:
                db.close()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        _until(holding.is_set, f"the holder of {scope} holding")

    def __enter__(self) -> _Holder:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.release.set()
        self.thread.join(30)


def _in_thread(work: Callable[[], object]) -> threading.Event:
    done = threading.Event()

    def run() -> None:
        work()
        done.set()

    threading.Thread(target=run, daemon=True).start()
    return done


def test_the_pool_bound_is_kept_under_many_threads(dsn: str) -> None:
    db = PgDatabase(dsn, pool_size=3)
    seen: list[int] = []
    start = threading.Barrier(THREADS)

    def one(n: int) -> None:
        start.wait()
        for _ in range(3):
            with db.write(f"pool-test:{n}") as conn:
                conn.execute("SELECT pg_sleep(0.01)")
                seen.append(int(db.read(_CLIENTS)[0][0]))  # a read inside a write: the write's connection
            seen.append(int(db.read(_CLIENTS)[0][0]))

    try:
        db.ensure("")
        threads = [threading.Thread(target=one, args=(n,)) for n in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert len(seen) == THREADS * 6  # every thread got through, none was refused
        assert db.peak <= 3 and max(seen) <= 3  # never more connections than the bound, seen by the server too
    finally:
        db.close()


def test_the_pool_size_comes_from_the_commons_settings(dsn: str, world: World,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RW_TEST_COMMONS_DSN", dsn)
    commons = world.home.settings.backends.commons.model_copy(
        update={"kind": "postgres", "dsn_env": "RW_TEST_COMMONS_DSN", "pool_size": 2})
    backends = world.home.settings.backends.model_copy(update={"commons": commons})
    world.home.save_settings(world.home.settings.model_copy(update={"backends": backends}))
    db = commons_database(world.home)
    assert db is shared_database(dsn) and isinstance(db, PgDatabase) and db.pool_size == 2


def test_a_thread_beyond_the_bound_waits_then_is_told_to_retry(dsn: str) -> None:
    db = PgDatabase(dsn, pool_size=1, wait_s=0.2)
    held, release = threading.Event(), threading.Event()

    def holder() -> None:
        with db.write("pool-holder"):
            held.set()
            release.wait(60)

    thread = threading.Thread(target=holder, daemon=True)
    thread.start()
    try:
        _until(held.is_set, "the one connection lent")
        with pytest.raises(RetryableError, match="pool_size"):
            db.read("SELECT 1")
    finally:
        release.set()
        thread.join(30)
    assert db.read("SELECT 1")[0][0] == 1  # given back: the next thread gets it
    db.close()


def test_messages_are_posted_beside_another_writer_and_wait_only_on_their_own_inbox(
        dsn: str, tmp_path: Path) -> None:
    identities = FileIdentities(tmp_path / "identities.json")
    db = PgDatabase(dsn)
    db.ensure("")
    commons = LocalCommons(db, identities)

    def post(key: str, agent: str) -> None:
        commons.post([OutgoingMessage(key, "question", "hello", "p", "extract-1", to_agent=agent)], now=NOW)

    try:
        with _Holder(dsn, "claim:p/extract-9"):  # a claim being written: messages need not wait for it
            assert _in_thread(lambda: post("beside-claim", "agent-b")).wait(60)
        with _Holder(dsn, ["inbox:agent-a"]) as holder:  # a post to agent-a's inbox in progress
            other = _in_thread(lambda: post("other-inbox", "agent-b"))
            assert other.wait(60)  # another inbox: beside it
            same = _in_thread(lambda: post("same-inbox", "agent-a"))
            _until(lambda: _advisory_waiters(dsn) == 1, "the post to the same inbox waiting")
            assert not same.is_set()
            holder.release.set()
            assert same.wait(60)
        keys = [m.body for m in commons.inbox("agent-b")]
        assert keys == ["hello", "hello"] and len(commons.inbox("agent-a")) == 1
    finally:
        db.close()


def test_the_notifier_moves_its_cursor_beside_another_writer(dsn: str, world: World,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RW_TEST_COMMONS_DSN", dsn)
    commons = world.home.settings.backends.commons.model_copy(
        update={"kind": "postgres", "dsn_env": "RW_TEST_COMMONS_DSN"})
    backends = world.home.settings.backends.model_copy(update={"commons": commons})
    world.home.save_settings(world.home.settings.model_copy(update={"backends": backends}))
    deliver(world.home, now=NOW)  # the past is read silently
    world.leaf("extract-1")
    assert world.submit(world.extract("extract-1")).outcome == "accepted"
    # A write of another subject in progress (a lease being renewed): the catch-up, its posts and its
    # cursor, runs beside it. Under the one write lock it would wait for the holder to let go.
    with _Holder(dsn, "lease:another-project"):
        delivered: list[int] = []
        done = _in_thread(lambda: delivered.append(deliver(world.home, now=NOW)))
        assert done.wait(60) and delivered[0] > 0
    assert deliver(world.home, now=NOW) == 0  # the cursor moved: nothing twice


def test_placement_reads_recent_landings_from_the_journal_not_the_lease_count(dsn: str) -> None:
    db = PgDatabase(dsn)
    try:
        db.ensure("")
        journal = Journal(db, "a")
        now = datetime.now(UTC)
        assert leases.acquire(db, "busy", "a", "http://a.internal", ttl_s=60) is not None
        for quiet in ("quiet-1", "quiet-2", "quiet-3"):
            assert leases.acquire(db, quiet, "b", "http://b.internal", ttl_s=60) is not None
        for n in range(12):
            journal.begin(agent="agent-a", project="busy", leaf_id=f"extract-{n}", key=f"k-{n}", digest=f"d{n}",
                          trace_id=f"t{n}", base_revision=None, ledger_from=0, now=now)
        journal.begin(agent="agent-b", project="quiet-1", leaf_id="extract-0", key="q-0", digest="q0", trace_id="q0",
                      base_revision=None, ledger_from=0, now=now)
        leases.beat(db, "a", "http://a.internal")
        leases.beat(db, "b", "http://b.internal")
        work = leases.live_work(db, live_s=60, window_s=60)
        assert {name: (w.held, w.landings) for name, w in work.items()} == {"a": (1, 12), "b": (3, 1)}
        assert leases.recent_landings(db, ["busy", "quiet-2"], window_s=60) == {"busy": 12, "quiet-2": 0}
        weighed = {name: Load(w.landings, w.held) for name, w in work.items()}
        assert place("new-project", weighed, here="a") == "b"  # fewer landings, though three leases to a's one
    finally:
        db.close()
