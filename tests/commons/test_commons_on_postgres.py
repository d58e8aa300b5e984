"""The Commons on PostgreSQL keeps SQLite's guarantees across instances: one claim holder, each
message stored once, one submission per idempotency key, migrations applied once, the outbox
delivered exactly once — against a throwaway cluster the test starts on loopback."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import TypeVar

import pytest

from tests.support.servers import postgres_cluster
from tests.support.world import NOW, World
from verifier.commons import leases
from verifier.commons.adapter import ClaimConflict, OutgoingMessage
from verifier.commons.backend import commons_database
from verifier.commons.local import LocalCommons
from verifier.commons.payloads import commons_payloads
from verifier.commons.pgdb import PgDatabase, migrate, migrations, translate
from verifier.commons.pgidentities import PgIdentities
from verifier.errors import AuthError, ConflictError
from verifier.messages.outbox import deliver
from verifier.service.journal import Journal
from verifier.store.identities import Actor, FileIdentities

pytestmark = [pytest.mark.slow, pytest.mark.postgres]  # a throwaway PostgreSQL cluster

T = TypeVar("T")
INSTANCES = 6


@pytest.fixture(scope="module")
def dsn() -> Iterator[str]:
    with postgres_cluster() as url:
        yield url


def _each_instance(dsn: str, work: Callable[[PgDatabase], T]) -> list[T]:
    """`work` run at once by INSTANCES instances, each with its own connection."""
    def run(_: int) -> T:
        db = PgDatabase(dsn)
        try:
            db.ensure("")
            return work(db)
        finally:
            db.close()
    with ThreadPoolExecutor(INSTANCES) as pool:
        return list(pool.map(run, range(INSTANCES)))


def test_sqlite_spellings_are_translated() -> None:
    assert translate("INSERT OR IGNORE INTO t VALUES (?, ?)") == "INSERT INTO t VALUES (%s, %s) ON CONFLICT DO NOTHING"
    assert translate("SELECT 1 WHERE a LIKE '5%'") == "SELECT 1 WHERE a LIKE '5%%'"


def test_instances_starting_together_apply_each_migration_once(dsn: str) -> None:
    _each_instance(dsn, lambda db: None)
    db = PgDatabase(dsn)
    try:
        versions = [str(row["version"]) for row in db.read("SELECT version FROM rw_migrations ORDER BY version")]
        assert versions == [version for version, _ in migrations()]
        assert migrate(db) == []
    finally:
        db.close()


def test_one_leaf_has_one_claim_holder_across_instances(dsn: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    identities = FileIdentities(tmp_path_factory.mktemp("ids") / "identities.json")
    numbers = itertools.count()  # thread-safe, unlike a generator

    def claim(db: PgDatabase) -> str | None:
        agent = f"agent-{next(numbers)}"
        try:
            LocalCommons(db, identities).claim("p", "extract-9", agent, until=NOW + timedelta(hours=1), now=NOW)
        except ClaimConflict:
            return None
        return agent

    holders = [agent for agent in _each_instance(dsn, claim) if agent is not None]
    assert len(holders) == 1
    db = PgDatabase(dsn)
    try:
        assert LocalCommons(db, identities).claims("p", now=NOW)["extract-9"].agent == holders[0]
    finally:
        db.close()


def test_a_message_posted_by_every_instance_is_stored_once(dsn: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    identities = FileIdentities(tmp_path_factory.mktemp("ids") / "identities.json")
    message = OutgoingMessage(key="k-once", kind="question", body="hello", project="p", leaf_id=None,
                              to_agent="agent-z", sender="verifier", data={"n": 1})
    posted = _each_instance(dsn, lambda db: LocalCommons(db, identities).post([message], now=NOW))
    assert sum(posted) == 1
    db = PgDatabase(dsn)
    try:
        inbox = LocalCommons(db, identities).inbox("agent-z")
        assert [(m.kind, m.body, m.data) for m in inbox] == [("question", "hello", {"n": 1})]
        assert LocalCommons(db, identities).inbox("agent-z", after=inbox[0].id) == []
    finally:
        db.close()


def test_one_idempotency_key_starts_one_submission_across_instances(dsn: str) -> None:
    def begin(db: PgDatabase) -> tuple[str, bool]:
        started = Journal(db).begin(agent="agent-a", project="p", leaf_id="extract-1", key="idem-1", digest="d",
                                    trace_id="trc_0000000000000001", base_revision=None, ledger_from=1, now=NOW)
        return started.record.id, started.fresh

    results = _each_instance(dsn, begin)
    assert len({submission for submission, _ in results}) == 1
    assert [fresh for _, fresh in results].count(True) == 1


def test_the_outbox_is_delivered_once_into_postgres(dsn: str, world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RW_TEST_COMMONS_DSN", dsn)
    backends = world.home.settings.backends.model_copy(
        update={"commons": world.home.settings.backends.commons.model_copy(
            update={"kind": "postgres", "dsn_env": "RW_TEST_COMMONS_DSN"})})
    world.home.save_settings(world.home.settings.model_copy(update={"backends": backends}))
    db = commons_database(world.home)
    assert isinstance(db, PgDatabase)
    try:
        deliver(world.home, now=NOW)  # the past is read silently
        world.leaf("extract-1")
        assert world.submit(world.extract("extract-1")).outcome == "accepted"
        assert deliver(world.home, now=NOW) > 0
        assert deliver(world.home, now=NOW) == 0
        kinds = [m.kind for m in LocalCommons(db, world.home.identities).inbox("agent-a")]
        assert kinds == ["first_minute"]
    finally:
        db.close()


def test_one_instance_holds_a_project_lease_until_it_expires(dsn: str) -> None:
    numbers = itertools.count()  # one holder name per instance (a pool thread may run two of them)
    taken = [lease for lease in _each_instance(dsn, lambda db: leases.acquire(
        db, "lease-p", f"instance-{next(numbers)}", "http://127.0.0.1:1", ttl_s=30)) if lease]
    assert len(taken) == 1 and taken[0].fencing == 1
    db = PgDatabase(dsn)
    try:
        # Held for long enough that no pause of a loaded machine lets it run out before it should.
        first = leases.acquire(db, "lease-q", "a", "http://a", ttl_s=30)
        assert first is not None and first.fencing == 1
        assert leases.acquire(db, "lease-q", "b", "http://b", ttl_s=30) is None  # held: refused
        assert leases.holder(db, "lease-q") == first
        # "a" renews once more, for a moment, and then stops renewing (killed): its lease runs out.
        assert leases.acquire(db, "lease-q", "a", "http://a", ttl_s=0.5) == first  # renewed, same fence
        _until(lambda: leases.holder(db, "lease-q") is None, "a's last, short renewal running out")
        second = leases.acquire(db, "lease-q", "b", "http://b", ttl_s=30)
        assert second is not None and second.fencing == 2
        assert leases.acquire(db, "lease-q", "a", "http://a", ttl_s=30) is None  # the old holder lost it
        assert leases.release(db, "lease-q", "b") and leases.holder(db, "lease-q") is None
        third = leases.acquire(db, "lease-q", "a", "http://a", ttl_s=30)
        assert third is not None and third.fencing == 3
    finally:
        db.close()


def _advisory_waiters(dsn: str) -> int:
    """How many advisory-lock requests are queued, not granted (what the writers wait on)."""
    db = PgDatabase(dsn)
    try:
        rows = db.read("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
        return int(rows[0][0])
    finally:
        db.close()


def _until(condition: Callable[[], bool], what: str, timeout_s: float = 60.0) -> None:
    """Wait for a state (not for a time): polls until `condition` holds; fails naming `what`."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"never saw: {what}"
        time.sleep(0.02)


class _Writers:
    """A scoped writer holding its lock until released, and writers started one by one beside it;
    `finished` records when each got through. close() releases and joins all, always."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.release = threading.Event()
        self.finished: dict[str, float] = {}
        self.threads: list[threading.Thread] = []

    def hold(self, scope: str) -> None:
        holding = threading.Event()

        def run() -> None:
            db = PgDatabase(self.dsn)
            try:
                with db.write(scope):
                    holding.set()
                    self.release.wait()
            finally:
                db.close()

        self._start(run)
        _until(holding.is_set, f"the holder of {scope} holding")

    def write(self, name: str, scope: str | None) -> None:
        def run() -> None:
            db = PgDatabase(self.dsn)
            try:
                with db.write(scope):
                    self.finished[name] = time.monotonic()
            finally:
                db.close()

        self._start(run)

    def _start(self, run: Callable[[], None]) -> None:
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        self.threads.append(thread)

    def close(self) -> None:
        self.release.set()
        for thread in self.threads:
            thread.join(30)


@pytest.fixture
def writers(dsn: str) -> Iterator[_Writers]:
    group = _Writers(dsn)
    try:
        yield group
    finally:
        group.close()  # released even when an assertion failed: no lock outlives its test


def test_scoped_writes_run_beside_each_other_but_never_beside_an_unscoped_one(dsn: str, writers: _Writers) -> None:
    writers.hold("claim:p/leaf-1")
    writers.write("other scope", "claim:p/leaf-2")
    _until(lambda: "other scope" in writers.finished, "the other scope's writer finishing beside the holder")
    writers.write("same scope", "claim:p/leaf-1")
    writers.write("unscoped", None)
    _until(lambda: _advisory_waiters(dsn) == 2, "the same-scope and the unscoped writer both waiting")
    assert set(writers.finished) == {"other scope"}
    released = time.monotonic()
    writers.release.set()
    _until(lambda: len(writers.finished) == 3, "every writer finishing once the holder let go")
    assert writers.finished["same scope"] >= released and writers.finished["unscoped"] >= released


def test_a_scoped_writer_queues_behind_a_waiting_unscoped_one(dsn: str, writers: _Writers) -> None:
    # PostgreSQL grants a lock only when it conflicts neither with its holders nor with the
    # requests queued before it, so an unscoped writer is never starved by a stream of scoped
    # ones: a scoped writer of another scope that arrives while an unscoped one waits waits too.
    # This is the order the scoped test above could reveal when its threads started out of order.
    writers.hold("claim:p/leaf-1")
    writers.write("unscoped", None)
    _until(lambda: _advisory_waiters(dsn) == 1, "the unscoped writer waiting on the holder")
    writers.write("other scope", "claim:p/leaf-2")
    _until(lambda: _advisory_waiters(dsn) == 2, "the later scoped writer queued behind the unscoped one")
    assert writers.finished == {}
    writers.release.set()
    _until(lambda: len(writers.finished) == 2, "both writers finishing once the holder let go")
    assert writers.finished["unscoped"] <= writers.finished["other scope"]


def test_a_token_made_or_revoked_on_one_instance_holds_on_every_other(dsn: str, tmp_path: Path) -> None:
    seed = FileIdentities(tmp_path / "identities.json")
    old_token = seed.add("agent-from-file", "op-f", "agent", NOW)
    a, b, c = (PgIdentities(dsn, seed=seed.path, shared=False) for _ in range(3))
    try:
        assert b.authenticate(old_token).handle == "agent-from-file"  # the file's registry, copied in once
        late = seed.add("agent-late", "op-f", "agent", NOW)
        with pytest.raises(AuthError):
            c.authenticate(late)  # not copied twice: PostgreSQL is the registry now
        token = a.add("agent-pg", "op-p", "agent", NOW)
        assert b.authenticate(token) == Actor("agent-pg", "op-p", "agent")
        assert b.get("agent-pg") == Actor("agent-pg", "op-p", "agent")
        with pytest.raises(ConflictError):
            b.add("agent-pg", "op-p", "agent", NOW)
        assert a.revoke_leaked([token, "rwt_not-a-token"], NOW, "a thread message") == ["agent-pg"]
        with pytest.raises(AuthError, match="revoked"):
            b.authenticate(token)
        with pytest.raises(ConflictError):
            b.add("agent-pg", "someone-else", "agent", NOW)  # only its operator gets it back
        again = b.add("agent-pg", "op-p", "agent", NOW)
        assert a.authenticate(again).handle == "agent-pg"
    finally:
        for registry in (a, b, c):
            registry.close()


def test_the_leak_search_reads_every_row_of_a_postgres_commons_for_its_project(dsn: str, tmp_path: Path) -> None:
    db = PgDatabase(dsn)
    try:
        db.ensure("")
        commons = LocalCommons(db, FileIdentities(tmp_path / "identities.json"))
        commons.post([OutgoingMessage("leak-1", "outcome", "An ordinary outcome.", "leaky-project", "extract-1", None,
                                      data={"digest": {"note": "seen CANARY-in-data"}})], now=NOW)
        commons.post([OutgoingMessage("leak-2", "outcome", "CANARY-elsewhere", "another-project", "x", None)],
                     now=NOW)
        payloads = commons_payloads(tmp_path, "leaky-project", postgres=db)
    finally:
        db.close()
    messages = [body for where, body in payloads.items() if where.startswith("commons:messages:")]
    assert any(b"CANARY-in-data" in body for body in messages)  # JSON data kept as stored
    assert not any(b"CANARY-elsewhere" in body for body in payloads.values())  # another project's row
    assert any(where.startswith("commons:rw_migrations:") for where in payloads)  # every table is read
