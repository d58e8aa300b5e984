"""The submissions journal: every attempt the service starts, so none is lost when it dies.

A row is written (and committed) before the pipeline runs and finished with the verdict after, so
after a `kill -9` start-up recovery finds the attempts that were running and settles each one:
the ledger already has its row (the process died after landing: the verdict is rebuilt from the
row) or it has none (a `crash` row is written for it). The journal also answers
`GET /submissions/{id}` and makes retries safe: a client's `Idempotency-Key` names one attempt,
and sending it again returns that attempt's verdict instead of submitting twice.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from verifier.commons.db import CommonsDB
from verifier.commons.local import epoch, moment

State = Literal["running", "done", "interrupted", "failed"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS submissions (
  id TEXT PRIMARY KEY, agent TEXT NOT NULL, project TEXT NOT NULL, leaf_id TEXT NOT NULL,
  idempotency_key TEXT, digest TEXT NOT NULL, trace_id TEXT NOT NULL, base_revision TEXT,
  ledger_from INTEGER NOT NULL, state TEXT NOT NULL, pid INTEGER NOT NULL, started_at REAL NOT NULL,
  finished_at REAL, verdict TEXT, recovered INTEGER NOT NULL DEFAULT 0,
  UNIQUE (agent, idempotency_key));
CREATE INDEX IF NOT EXISTS submissions_running ON submissions (state)
"""


@dataclass(frozen=True)
class Record:
    id: str
    agent: str
    project: str
    leaf_id: str
    idempotency_key: str | None
    digest: str
    trace_id: str
    base_revision: str | None
    ledger_from: int
    state: State
    pid: int
    started_at: datetime
    verdict: dict[str, Any] | None
    recovered: bool

    def to_json(self) -> dict[str, Any]:
        return {"submission_id": self.id, "project": self.project, "leaf_id": self.leaf_id, "agent": self.agent,
                "state": self.state, "recovered": self.recovered, "verdict": self.verdict}


def _record(row: sqlite3.Row) -> Record:
    return Record(
        id=row["id"], agent=row["agent"], project=row["project"], leaf_id=row["leaf_id"],
        idempotency_key=row["idempotency_key"], digest=row["digest"], trace_id=row["trace_id"],
        base_revision=row["base_revision"], ledger_from=int(row["ledger_from"]), state=row["state"],
        pid=int(row["pid"]), started_at=moment(row["started_at"]),
        verdict=json.loads(row["verdict"]) if row["verdict"] else None, recovered=bool(row["recovered"]),
    )


@dataclass(frozen=True)
class Started:
    """What `begin` decided: run this record now, or answer with an earlier one."""

    record: Record
    fresh: bool


_BEGUN = ("INSERT INTO submissions (id, agent, project, leaf_id, idempotency_key, digest, trace_id, base_revision, "
          "ledger_from, state, pid, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *")
# The instance column is PostgreSQL's only (migration 0003: several instances share the journal).
_BEGUN_BY_INSTANCE = ("INSERT INTO submissions (id, agent, project, leaf_id, idempotency_key, digest, trace_id, "
                      "base_revision, ledger_from, state, pid, started_at, instance) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *")


class Journal:
    """`instance` (backends.instance, PostgreSQL Commons only): the name stamped on this instance's
    rows, so recovery on a shared journal settles its own rows and never a live instance's."""

    def __init__(self, db: CommonsDB, instance: str | None = None, *, live_s: float = 8.0) -> None:
        self.db = db
        self.instance = instance
        self.live_s = live_s  # backends.lease_s: an instance that beat more recently is alive
        db.ensure(SCHEMA)

    def get(self, submission_id: str) -> Record | None:
        rows = self.db.read("SELECT * FROM submissions WHERE id = ?", (submission_id,))
        return _record(rows[0]) if rows else None

    def begin(self, *, agent: str, project: str, leaf_id: str, key: str | None, digest: str, trace_id: str,
              base_revision: str | None, ledger_from: int, now: datetime) -> Started:
        """Record a new running attempt, or return the one this idempotency key already names.

        An interrupted attempt (the service died under it and recovery wrote its crash row, or it was
        refused as retryable with nothing kept) is run again under the same key: the client never had
        a verdict for it.
        """
        with self.db.write(f"journal:{agent}:{key or ''}") as conn:
            if key is not None:
                row = conn.execute("SELECT * FROM submissions WHERE agent = ? AND idempotency_key = ?",
                                   (agent, key)).fetchone()
                if row is not None:
                    earlier = _record(row)
                    if earlier.state != "interrupted":
                        return Started(earlier, fresh=False)
                    conn.execute("UPDATE submissions SET idempotency_key = NULL WHERE id = ?", (earlier.id,))
            submission_id = "sub_" + secrets.token_hex(12)
            values = (submission_id, agent, project, leaf_id, key, digest, trace_id, base_revision, ledger_from,
                      "running", os.getpid(), epoch(now))
            # One statement (a round trip on PostgreSQL), the row as stored coming back.
            row = conn.execute(_BEGUN, values).fetchone() if self.instance is None else \
                conn.execute(_BEGUN_BY_INSTANCE, (*values, self.instance)).fetchone()
        return Started(_record(row), fresh=True)

    def finish(self, submission_id: str, verdict: dict[str, Any], *, now: datetime, state: State = "done",
               recovered: bool = False) -> None:
        with self.db.write(f"journal-row:{submission_id}") as conn:
            conn.execute("UPDATE submissions SET state = ?, verdict = ?, finished_at = ?, recovered = ? WHERE id = ?",
                         (state, json.dumps(verdict, sort_keys=True), epoch(now), int(recovered), submission_id))

    def running(self) -> list[Record]:
        return [_record(row) for row in self.db.read("SELECT * FROM submissions WHERE state = 'running' "
                                                     "ORDER BY started_at")]

    def orphaned(self, *, started_before: datetime) -> list[Record]:
        """The running rows start-up recovery may settle. One instance (no name): all of them.
        Named (a shared PostgreSQL journal): its own, unnamed ones, and those of an instance that
        holds no live project lease and has not beaten for `live_s` (dead: its leases ran out, its
        workers stopped beating) and began before `started_before` (now minus the lease time), so
        a live instance's attempt that has not yet taken its project's lease is left alone."""
        if self.instance is None:
            return self.running()
        rows = self.db.read(_ORPHANED, (self.instance, epoch(started_before), self.live_s))
        return [_record(row) for row in rows]

    def abandoned(self, submission_id: str, *, started_before: datetime) -> bool:
        """Is this running row another, dead, instance's (what a live instance may settle while it
        serves: a client retrying with the same Idempotency-Key after its instance died)?"""
        if self.instance is None:
            return False
        rows = self.db.read(_ORPHANED.replace("ORDER BY", "AND s.id = ? AND s.instance IS NOT NULL "
                                              "AND s.instance <> ? ORDER BY"),
                            (self.instance, epoch(started_before), self.live_s, submission_id, self.instance))
        return bool(rows)


# PostgreSQL only (project_leases, migration 0002; instances, migration 0005); expiry and beats on
# the database's clock, as leases are.
_ORPHANED = (
    "SELECT * FROM submissions s WHERE s.state = 'running' AND (s.instance IS NULL OR s.instance = ? "
    "OR (s.started_at < ? AND NOT EXISTS (SELECT 1 FROM project_leases l WHERE l.holder = s.instance "
    "AND l.expires_at > EXTRACT(EPOCH FROM clock_timestamp())) AND NOT EXISTS (SELECT 1 FROM instances i "
    "WHERE i.name = s.instance AND i.beat_at > EXTRACT(EPOCH FROM clock_timestamp()) - ?))) "
    "ORDER BY s.started_at")
