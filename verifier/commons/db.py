"""One SQLite file shared by every process and thread of the service: WAL, busy waits, no surprises.

Each thread gets its own connection (sqlite3 connections must not cross threads, and never a fork).
Writes go through `write()`, a `BEGIN IMMEDIATE` transaction: it takes the database's write lock
up front, so two writers queue instead of failing half-way with SQLITE_BUSY. WAL lets readers run
beside one writer; `synchronous=NORMAL` keeps every committed transaction across a killed
process (only a power cut can lose the last ones, which the git side does not depend on).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

from verifier.constants import BUSY_TIMEOUT_MS


class CommonsDB(Protocol):
    """The seam every user of the Commons database goes through: this SQLite `Database`, or
    `verifier.commons.pgdb.PgDatabase` on PostgreSQL (chosen by `verifier.commons.backend`)."""

    # `scope`: the rows the transaction's check-then-write concerns (a claim's leaf, a lease's
    # project, an idempotency key, the inboxes a post writes to: several); transactions of
    # different scopes may run at once where the database allows it (PostgreSQL), and every
    # unscoped one runs alone.
    def write(self, scope: str | Sequence[str] | None = None) -> AbstractContextManager[Any]: ...
    def read(self, sql: str, params: tuple[object, ...] = ()) -> list[Any]: ...
    def ensure(self, schema: str) -> None: ...
    def close(self) -> None: ...


class Database:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._pid = os.getpid()
        path.parent.mkdir(parents=True, exist_ok=True)
        # Made 0600 before SQLite opens it (its -wal and -shm files take the same mode): the
        # claims, messages and identities' traffic in it are nobody else's to read.
        os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600))

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (a new one after a fork: inherited handles are never reused)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None or self._pid != os.getpid():
            self._pid = os.getpid()
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                   check_same_thread=True)
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            self._local.conn = conn
        return conn

    @contextlib.contextmanager
    def write(self, scope: str | Sequence[str] | None = None) -> Iterator[sqlite3.Connection]:
        """A write transaction: committed when the block ends, rolled back if it raises."""
        conn = self.connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def read(self, sql: str, params: tuple[object, ...] = ()) -> list[sqlite3.Row]:
        return list(self.connection().execute(sql, params))

    def ensure(self, schema: str) -> None:
        """Create tables and indexes (every statement is IF NOT EXISTS, so any process may run it)."""
        with self.write() as conn:
            for statement in schema.split(";"):
                if statement.strip():
                    conn.execute(statement)

    def close(self) -> None:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
