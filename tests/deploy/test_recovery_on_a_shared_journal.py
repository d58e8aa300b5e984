"""Start-up recovery on a shared PostgreSQL journal settles only what is its own to settle: its
own running attempts and those of a dead instance (no live lease, no recent beat), never a live
instance's."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from tests.support.servers import postgres_cluster
from tests.support.world import NOW
from verifier.commons import leases
from verifier.commons.pgdb import PgDatabase
from verifier.service.journal import Journal

pytestmark = [pytest.mark.slow, pytest.mark.postgres]  # a throwaway PostgreSQL cluster

LEASE = timedelta(seconds=8)


@pytest.fixture(scope="module")
def db() -> Iterator[PgDatabase]:
    with postgres_cluster() as dsn:
        database = PgDatabase(dsn)
        try:
            yield database
        finally:
            database.close()


def _start(db: PgDatabase, instance: str | None, project: str, *, ago: timedelta) -> str:
    started = Journal(db, instance).begin(
        agent=f"agent-{instance}", project=project, leaf_id="extract-1", key=None, digest="d",
        trace_id="trc_0000000000000001", base_revision=None, ledger_from=1, now=NOW - ago)
    return started.record.id


def test_recovery_takes_its_own_and_dead_instances_rows_not_a_live_ones(db: PgDatabase) -> None:
    assert leases.acquire(db, "p-live", "live", "http://live", ttl_s=60) is not None
    assert leases.acquire(db, "p-dead", "dead", "http://dead", ttl_s=60) is not None
    assert leases.release(db, "p-dead", "dead")  # its lease is over: as if it ran out
    mine = _start(db, "me", "p-me", ago=timedelta(seconds=1))
    live = _start(db, "live", "p-live", ago=timedelta(hours=1))
    dead = _start(db, "dead", "p-dead", ago=timedelta(hours=1))
    starting = _start(db, "starting", "p-new", ago=timedelta(seconds=1))  # no lease taken yet
    unnamed = _start(db, None, "p-old", ago=timedelta(hours=1))

    taken = {record.id for record in Journal(db, "me").orphaned(started_before=NOW - LEASE)}

    assert taken == {mine, dead, unnamed}
    assert live not in taken and starting not in taken
    # the live instance, recovering, takes its own and the dead one's; never "me"'s fresh row
    assert {record.id for record in Journal(db, "live").orphaned(started_before=NOW - LEASE)} \
        == {live, dead, unnamed}
    # one instance (no name) keeps settling every running row, as on SQLite
    assert {record.id for record in Journal(db).orphaned(started_before=NOW - LEASE)} \
        == {mine, live, dead, starting, unnamed}


def test_a_finished_row_is_never_taken(db: PgDatabase) -> None:
    journal = Journal(db, "me2")
    done = _start(db, "me2", "p-me2", ago=timedelta(hours=1))
    journal.finish(done, {"outcome": "accepted"}, now=NOW)
    assert done not in {record.id for record in journal.orphaned(started_before=NOW)}


def test_a_serving_instance_settles_only_a_dead_instances_running_row(db: PgDatabase) -> None:
    assert leases.acquire(db, "q-live", "live2", "http://live2", ttl_s=60) is not None
    dead = _start(db, "dead2", "q-dead", ago=timedelta(hours=1))
    live = _start(db, "live2", "q-live", ago=timedelta(hours=1))
    fresh = _start(db, "new2", "q-new", ago=timedelta(seconds=1))
    own = _start(db, "me3", "q-me", ago=timedelta(hours=1))
    journal = Journal(db, "me3")
    assert journal.abandoned(dead, started_before=NOW - LEASE)
    assert not journal.abandoned(live, started_before=NOW - LEASE)  # its instance holds a lease
    assert not journal.abandoned(fresh, started_before=NOW - LEASE)  # may not have taken its lease yet
    assert not journal.abandoned(own, started_before=NOW - LEASE)  # its own: running in one of its workers
    assert not Journal(db).abandoned(dead, started_before=NOW - LEASE)  # one instance: never


def test_an_instance_that_beats_is_alive_though_it_holds_no_lease(db: PgDatabase) -> None:
    leases.beat(db, "beating", "http://beating")  # alive: its workers beat, its lease ran out
    beating = _start(db, "beating", "r-beating", ago=timedelta(hours=1))
    silent = _start(db, "silent", "r-silent", ago=timedelta(hours=1))  # no lease, no beat: dead
    journal = Journal(db, "me4", live_s=LEASE.total_seconds())
    assert not journal.abandoned(beating, started_before=NOW - LEASE)
    assert journal.abandoned(silent, started_before=NOW - LEASE)
    taken = {record.id for record in journal.orphaned(started_before=NOW - LEASE)}
    assert silent in taken and beating not in taken
    # once its beat is older than the lease, it is dead too
    with db.write() as conn:
        conn.execute("UPDATE instances SET beat_at = beat_at - 60 WHERE name = 'beating'")
    assert journal.abandoned(beating, started_before=NOW - LEASE)
