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
unscoped writer (messages, the cursor, outage extensions).
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from importlib import resources
from typing import Any

import psycopg
from psycopg.rows import RowMaker

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
        statement = translate(sql)
        for params in rows:  # one by one: each row's change count is summed, as SQLite's total_changes
            self.total_changes += max(self.conn.execute(statement, tuple(params)).rowcount, 0)


class PgDatabase:
    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self._local = threading.local()
        self._pid = os.getpid()
        self._migrated = False

    def connection(self) -> psycopg.Connection[Row]:
        """This thread's connection (a new one after a fork: inherited sockets are never reused)."""
        conn: psycopg.Connection[Row] | None = getattr(self._local, "conn", None)
        if conn is None or conn.closed or self._pid != os.getpid():
            self._pid = os.getpid()
            conn = psycopg.connect(self.dsn, autocommit=True, row_factory=_rows)
            self._local.conn = conn
        return conn

    @contextlib.contextmanager
    def write(self, scope: str | None = None) -> Iterator[Transaction]:
        """A write transaction, committed when the block ends, rolled back if it raises. Unscoped:
        serial with every other writer. Scoped: serial with the writers of the same scope and with
        every unscoped one (the write lock is taken shared), beside those of other scopes, except
        behind an unscoped writer already waiting: PostgreSQL's lock queue is fair, so a stream of
        scoped writers never starves an unscoped one (tests/commons/test_commons_on_postgres.py)."""
        conn = self.connection()
        with conn.transaction():
            if scope is None:
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            else:
                conn.execute("SELECT pg_advisory_xact_lock_shared(%s), pg_advisory_xact_lock(hashtextextended(%s, 0))",
                             (WRITE_LOCK, scope))
            yield Transaction(conn)

    def read(self, sql: str, params: tuple[object, ...] = ()) -> list[Row]:
        return self.connection().execute(translate(sql), params).fetchall()

    def ensure(self, schema: str) -> None:
        """Bring the database to the repository's migrations (the SQLite `schema` is not used here)."""
        del schema
        if not self._migrated:
            migrate(self)
            self._migrated = True

    def close(self) -> None:
        conn: psycopg.Connection[Row] | None = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


def migrations() -> list[tuple[str, str]]:
    """(version, SQL) of every migration kept in the repository, in order."""
    folder = resources.files(MIGRATIONS)
    found = sorted(entry.name for entry in folder.iterdir() if entry.name.endswith(".sql"))
    return [(name.removesuffix(".sql"), folder.joinpath(name).read_text(encoding="utf-8")) for name in found]


def migrate(db: PgDatabase) -> list[str]:
    """Apply the migrations not applied yet, each in its own transaction; returns their versions.
    Under the write lock, so instances starting together apply each one once."""
    applied: list[str] = []
    conn = db.connection()
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
    return applied


_shared: dict[tuple[int, str], PgDatabase] = {}
_shared_guard = threading.Lock()


def shared_database(dsn: str) -> PgDatabase:
    """The one PgDatabase of this process for `dsn`: the Commons, the identity registry and the
    leases share its connections (one per thread that uses it), so a busy worker holds as many
    connections as threads, not three times as many (PostgreSQL's max_connections is finite)."""
    with _shared_guard:
        key = (os.getpid(), dsn)
        if key not in _shared:
            _shared[key] = PgDatabase(dsn)
        return _shared[key]
