"""The Commons database on PostgreSQL (psycopg 3): the same seam as `verifier.commons.db.Database`
(`write()`, `read()`, `ensure()`, `close()`), so the Commons, the outbox's notifier, the service's
journal and heartbeat run unchanged on either.

The SQL those modules write is SQLite's; the few spellings that differ are translated here
(`?` placeholders, `INSERT OR IGNORE`). Tables come from the migrations kept in
verifier/commons/migrations/postgres/, applied once, in order, recorded in `rw_migrations`.

Exactly-once under several service instances: every write transaction first takes one
transaction-scoped advisory lock, as SQLite's `BEGIN IMMEDIATE` takes its write lock. So the
check-then-write steps of claims, the journal's idempotency keys and the notifier's cursor
compare-and-set stay serial across processes and machines, and message ids grow in commit order (an
inbox read `after` an id never skips a message committed later under a smaller id). The hot
single-subject writes (a claim, a journal row, a project lease, an identity) name a scope: they take the lock
shared plus a lock of their own subject, so they run beside each other, and still never beside an
unscoped writer (outage extensions, registrations). A write may name several scopes (a message
post names every inbox and thread it writes to): their locks are taken in one fixed order, so two
such writers never wait on each other in a circle. Message ids then grow in commit order within
each inbox and thread, which is all a reader `after` an id relies on (each read names one).

Connections: one bounded pool per process and DSN (`shared_database`, sized by
backends.commons.pool_size, COMMONS_POOL_SIZE by default). A thread holds one connection for a
whole write block or read, and a read or write inside a write block of the same thread uses that
block's connection, so nesting never asks the pool for a second one. Beyond the bound, a thread
waits for a connection to come back (RetryableError after COMMONS_POOL_WAIT_S).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from importlib import resources
from typing import Any

import psycopg
from psycopg.rows import RowMaker

from verifier.constants import COMMONS_POOL_SIZE, COMMONS_POOL_WAIT_S
from verifier.errors import RetryableError

WRITE_LOCK = 0x5257_0001  # "RW" 1: the Commons' one write lock
MIGRATIONS = "verifier.commons.migrations.postgres"


class Row(tuple[Any, ...]):
    """A result row read by position or by column name, like sqlite3.Row."""

    names: dict[str, int]

    def __new__(cls, values: Sequence[Any], names: dict[str, int]) -> Row:
        row = super().__new__(cls, values)
        row.names = names
        return row

    def __getitem__(self, key: Any) -> Any:
        return super().__getitem__(self.names[key] if isinstance(key, str) else key)

    def keys(self) -> list[str]:
        return list(self.names)


def _rows(cursor: psycopg.Cursor[Any]) -> RowMaker[Row]:
    names = {column.name: n for n, column in enumerate(cursor.description or ())}
    return lambda values: Row(values, names)


_INSERT_OR_IGNORE = re.compile(r"^\s*INSERT\s+OR\s+IGNORE\s+INTO\b", re.IGNORECASE)


def translate(sql: str) -> str:
    """SQLite's spelling of a statement in PostgreSQL's. Pure."""
    out = sql.replace("%", "%%").replace("?", "%s")
    if _INSERT_OR_IGNORE.match(out):
        out = _INSERT_OR_IGNORE.sub("INSERT INTO", out, count=1) + " ON CONFLICT DO NOTHING"
    return out


class Transaction:
    """The connection as a write block sees it: execute, executemany, total_changes."""

    def __init__(self, conn: psycopg.Connection[Row]) -> None:
        self.conn = conn
        self.total_changes = 0

    def execute(self, sql: str, params: Sequence[Any] = ()) -> psycopg.Cursor[Row]:
        cursor = self.conn.execute(translate(sql), tuple(params))
        self.total_changes += max(cursor.rowcount, 0)
        return cursor

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Every row's statement in one batch (psycopg pipelines them: one round trip, not one per
        row); their change counts summed, as SQLite's total_changes."""
        batch = [tuple(params) for params in rows]
        if not batch:
            return
        with self.conn.cursor() as cursor:
            cursor.executemany(translate(sql), batch)
            self.total_changes += max(cursor.rowcount, 0)


def scope_keys(scopes: Iterable[str]) -> list[int]:
    """The advisory lock keys of several scopes, without repeats, in the one order every writer
    takes them (ascending). Pure."""
    return sorted({int.from_bytes(hashlib.blake2b(scope.encode(), digest_size=8).digest(), "big", signed=True)
                   for scope in scopes})


class PgDatabase:
    def __init__(self, dsn: str, *, pool_size: int = COMMONS_POOL_SIZE, wait_s: float = COMMONS_POOL_WAIT_S) -> None:
        self.dsn = dsn
        self.pool_size = pool_size
        self.wait_s = wait_s
        self._local = threading.local()
        self._pid = os.getpid()
        self._migrated = False
        self._guard = threading.Condition()
        self._idle: list[psycopg.Connection[Row]] = []
        self._opened = 0  # connections of this process, idle or lent
        self.peak = 0  # the most connections this process had open at once

    def _forked(self) -> None:
        """A new process: the inherited connections are its parent's (their sockets are never
        reused here, nor closed: closing would end the parent's sessions)."""
        self._pid = os.getpid()
        self._idle, self._opened, self.peak = [], 0, 0
        self._local = threading.local()

    @contextlib.contextmanager
    def lent(self) -> Iterator[psycopg.Connection[Row]]:
        """A connection for the block: the one this thread already holds, or one from the pool."""
        if self._pid != os.getpid():
            self._forked()
        held: psycopg.Connection[Row] | None = getattr(self._local, "conn", None)
        if held is not None:
            yield held
            return
        conn = self._take()
        self._local.conn = conn
        try:
            yield conn
        finally:
            self._local.conn = None
            self._give_back(conn)

    def resize(self, pool_size: int) -> None:
        """Bound this process's connections at `pool_size` from now on."""
        with self._guard:
            self.pool_size = pool_size
            self._guard.notify_all()

    def _take(self) -> psycopg.Connection[Row]:
        deadline = time.monotonic() + self.wait_s
        with self._guard:
            while True:
                while self._idle:
                    conn = self._idle.pop()
                    if not conn.closed:
                        return conn
                    self._opened -= 1
                if self._opened < self.pool_size:
                    self._opened += 1
                    self.peak = max(self.peak, self._opened)
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RetryableError(f"all {self.pool_size} Commons connections of this process stayed busy for "
                                         f"{self.wait_s:g} s (backends.commons.pool_size); nothing was kept: try again")
                self._guard.wait(left)
        try:
            return psycopg.connect(self.dsn, autocommit=True, row_factory=_rows)
        except BaseException:
            with self._guard:
                self._opened -= 1
                self._guard.notify()
            raise

    def _give_back(self, conn: psycopg.Connection[Row]) -> None:
        broken = conn.closed or conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE
        if broken:
            with contextlib.suppress(psycopg.Error):
                conn.close()
        with self._guard:
            if broken:
                self._opened -= 1
            else:
                self._idle.append(conn)
            self._guard.notify()

    @contextlib.contextmanager
    def write(self, scope: str | Sequence[str] | None = None) -> Iterator[Transaction]:
        """A write transaction, committed when the block ends, rolled back if it raises. Unscoped:
        serial with every other writer. Scoped: serial with the writers of the same scope (any of
        them, when it names several) and with every unscoped one (the write lock is taken shared),
        beside those of other scopes, except behind an unscoped writer already waiting: PostgreSQL's
        lock queue is fair, so a stream of scoped writers never starves an unscoped one
        (tests/commons/test_commons_on_postgres.py)."""
        with self.lent() as conn, conn.transaction():
            if scope is None:
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            elif isinstance(scope, str):
                conn.execute("SELECT pg_advisory_xact_lock_shared(%s), pg_advisory_xact_lock(hashtextextended(%s, 0))",
                             (WRITE_LOCK, scope))
            else:
                # One statement; the keys come out of unnest in the array's (ascending) order.
                conn.execute("SELECT pg_advisory_xact_lock_shared(%s), (SELECT count(pg_advisory_xact_lock(key)) "
                             "FROM unnest(%s::bigint[]) WITH ORDINALITY AS keys(key, n))",
                             (WRITE_LOCK, scope_keys(scope)))
            yield Transaction(conn)

    def read(self, sql: str, params: tuple[object, ...] = ()) -> list[Row]:
        with self.lent() as conn:
            return conn.execute(translate(sql), params).fetchall()

    def ensure(self, schema: str) -> None:
        """Bring the database to the repository's migrations (the SQLite `schema` is not used here)."""
        del schema
        if not self._migrated:
            migrate(self)
            self._migrated = True

    def close(self) -> None:
        """Close this process's idle connections (one lent to a block is closed when it comes back)."""
        with self._guard:
            idle, self._idle = self._idle, []
            self._opened -= len(idle)
        for conn in idle:
            with contextlib.suppress(psycopg.Error):
                conn.close()


def migrations() -> list[tuple[str, str]]:
    """(version, SQL) of every migration kept in the repository, in order."""
    folder = resources.files(MIGRATIONS)
    found = sorted(entry.name for entry in folder.iterdir() if entry.name.endswith(".sql"))
    return [(name.removesuffix(".sql"), folder.joinpath(name).read_text(encoding="utf-8")) for name in found]


def migrate(db: PgDatabase) -> list[str]:
    """Apply the migrations not applied yet, each in its own transaction; returns their versions.
    Under the write lock, so instances starting together apply each one once."""
    applied: list[str] = []
    with db.lent() as conn:
        _apply(conn, applied)
    return applied


def _apply(conn: psycopg.Connection[Row], applied: list[str]) -> None:
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS rw_migrations (version TEXT PRIMARY KEY, applied_at TIMESTAMPTZ "
                     "NOT NULL DEFAULT now())")
    for version, sql in migrations():
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            if conn.execute("SELECT 1 FROM rw_migrations WHERE version = %s", (version,)).fetchone():
                continue
            conn.execute(sql.encode())
            conn.execute("INSERT INTO rw_migrations (version) VALUES (%s)", (version,))
            applied.append(version)


_shared: dict[tuple[int, str], PgDatabase] = {}
_shared_guard = threading.Lock()


def shared_database(dsn: str, *, pool_size: int | None = None) -> PgDatabase:
    """The one PgDatabase of this process for `dsn`: the Commons, the identity registry and the
    leases share its pool, so a busy worker holds at most `pool_size` connections whatever its
    thread count (PostgreSQL's max_connections is finite). `pool_size` (backends.commons.pool_size)
    sets the bound; None keeps the one set (COMMONS_POOL_SIZE until one is)."""
    with _shared_guard:
        key = (os.getpid(), dsn)
        if key not in _shared:
            _shared[key] = PgDatabase(dsn)
        db = _shared[key]
    if pool_size is not None:
        db.resize(pool_size)
    return db
