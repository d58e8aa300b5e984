"""The local Commons: the adapter of `verifier.commons.adapter` on an embedded SQLite database.

Identity is the verifier home's registry (`verifier.store.identities`, sha256 of tokens only);
claims, messages and outage windows are tables in the home's database file (`HomeLayout.commons`),
shared by every worker process of the service. Times are stored as UTC epoch seconds so SQLite compares them.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime

from verifier.commons.adapter import Claim, ClaimConflict, Message, Outage, OutgoingMessage
from verifier.commons.db import CommonsDB
from verifier.commons.screen import withhold
from verifier.formats.base import iso
from verifier.store.identities import Actor, Identities

SCHEMA = """
CREATE TABLE IF NOT EXISTS claims (
  project TEXT NOT NULL, leaf_id TEXT NOT NULL, agent TEXT NOT NULL,
  claimed_at REAL NOT NULL, expires_at REAL NOT NULL,
  PRIMARY KEY (project, leaf_id));
CREATE TABLE IF NOT EXISTS messages (
  id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL UNIQUE, kind TEXT NOT NULL,
  project TEXT, leaf_id TEXT, to_agent TEXT, sender TEXT NOT NULL, body TEXT NOT NULL,
  data TEXT NOT NULL, created_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS messages_inbox ON messages (to_agent, id);
CREATE INDEX IF NOT EXISTS messages_thread ON messages (project, leaf_id, id);
CREATE TABLE IF NOT EXISTS outages (
  id INTEGER PRIMARY KEY AUTOINCREMENT, started_at REAL NOT NULL, ended_at REAL NOT NULL)
"""


def epoch(moment: datetime) -> float:
    return moment.timestamp()


def moment(value: float) -> datetime:
    return datetime.fromtimestamp(value, UTC)


class LocalCommons:
    def __init__(self, db: CommonsDB, identities: Identities) -> None:
        self.db = db
        self.identities = identities
        db.ensure(SCHEMA)

    # identity ---------------------------------------------------------------------------------

    def authenticate(self, token: str) -> Actor:
        return self.identities.authenticate(token)

    def actor(self, handle: str) -> Actor | None:
        return self.identities.get(handle)

    # claims -----------------------------------------------------------------------------------

    def claim(self, project: str, leaf_id: str, agent: str, *, until: datetime, now: datetime) -> Claim:
        with self.db.write(f"claim:{project}/{leaf_id}") as conn:
            row = conn.execute("SELECT agent, expires_at FROM claims WHERE project = ? AND leaf_id = ?",
                               (project, leaf_id)).fetchone()
            if row is not None and row["agent"] != agent and row["expires_at"] > epoch(now):
                until_held = moment(row["expires_at"])
                raise ClaimConflict(f"leaf {leaf_id} is claimed by {row['agent']} until {iso(until_held)}",
                                    row["agent"], until_held)
            conn.execute(
                "INSERT INTO claims (project, leaf_id, agent, claimed_at, expires_at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (project, leaf_id) DO UPDATE SET agent = excluded.agent, "
                "claimed_at = excluded.claimed_at, expires_at = excluded.expires_at",
                (project, leaf_id, agent, epoch(now), epoch(until)),
            )
        return Claim(project, leaf_id, agent, now, until)

    def release(self, project: str, leaf_id: str, agent: str, *, now: datetime) -> bool:
        with self.db.write(f"claim:{project}/{leaf_id}") as conn:
            cursor = conn.execute(
                "DELETE FROM claims WHERE project = ? AND leaf_id = ? AND agent = ? AND expires_at > ?",
                (project, leaf_id, agent, epoch(now)),
            )
            return bool(cursor.rowcount > 0)

    def close_leaf(self, project: str, leaf_id: str) -> None:
        with self.db.write(f"claim:{project}/{leaf_id}") as conn:
            conn.execute("DELETE FROM claims WHERE project = ? AND leaf_id = ?", (project, leaf_id))

    def claims(self, project: str, *, now: datetime) -> dict[str, Claim]:
        rows = self.db.read("SELECT * FROM claims WHERE project = ? AND expires_at > ?", (project, epoch(now)))
        return {
            row["leaf_id"]: Claim(project, row["leaf_id"], row["agent"], moment(row["claimed_at"]),
                                  moment(row["expires_at"]))
            for row in rows
        }

    def extend_claims(self, outage: Outage) -> int:
        """Claims live when the outage began keep the working time the outage took from them."""
        with self.db.write() as conn:
            cursor = conn.execute("UPDATE claims SET expires_at = expires_at + ? WHERE expires_at > ?",
                                  (outage.duration.total_seconds(), epoch(outage.started_at)))
            return int(cursor.rowcount)

    # messages ---------------------------------------------------------------------------------

    def post(self, messages: list[OutgoingMessage], *, now: datetime) -> int:
        """Store messages; one already stored under the same key is kept as it was."""
        if not messages:
            return 0
        messages = [withhold(message) for message in messages]  # scanned before stored
        # Scoped by every inbox and thread it writes to, not the one write lock: ids need grow in
        # commit order only within what one read names (verifier.commons.pgdb).
        with self.db.write(sorted({mailbox(m) for m in messages})) as conn:
            before = conn.total_changes
            conn.executemany(
                "INSERT OR IGNORE INTO messages (key, kind, project, leaf_id, to_agent, sender, body, data, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(m.key, m.kind, m.project, m.leaf_id, m.to_agent, m.sender, m.body,
                  json.dumps(m.data, sort_keys=True, default=str), epoch(now)) for m in messages],
            )
            return int(conn.total_changes - before)

    def message(self, key: str) -> Message | None:
        rows = self.db.read("SELECT * FROM messages WHERE key = ?", (key,))
        return _message(rows[0]) if rows else None

    def inbox(self, agent: str, *, after: int = 0, limit: int = 100) -> list[Message]:
        rows = self.db.read("SELECT * FROM messages WHERE to_agent = ? AND id > ? ORDER BY id LIMIT ?",
                            (agent, after, limit))
        return [_message(row) for row in rows]

    def thread(self, project: str, leaf_id: str, *, after: int = 0, limit: int = 100) -> list[Message]:
        rows = self.db.read(
            "SELECT * FROM messages WHERE project = ? AND leaf_id = ? AND to_agent IS NULL AND id > ? "
            "ORDER BY id LIMIT ?", (project, leaf_id, after, limit))
        return [_message(row) for row in rows]

    # outage windows ---------------------------------------------------------------------------

    def record_outage(self, outage: Outage) -> None:
        with self.db.write() as conn:
            conn.execute("INSERT INTO outages (started_at, ended_at) VALUES (?, ?)",
                         (epoch(outage.started_at), epoch(outage.ended_at)))

    def outages(self) -> list[Outage]:
        rows = self.db.read("SELECT started_at, ended_at FROM outages ORDER BY started_at")
        return [Outage(moment(row["started_at"]), moment(row["ended_at"])) for row in rows]


def mailbox(message: OutgoingMessage) -> str:
    """The one inbox or thread a message is read from: its write scope. Pure."""
    if message.to_agent is not None:
        return f"inbox:{message.to_agent}"
    return f"thread:{message.project}/{message.leaf_id}"


def _message(row: sqlite3.Row) -> Message:
    return Message(
        id=int(row["id"]), kind=str(row["kind"]), body=str(row["body"]), project=row["project"],
        leaf_id=row["leaf_id"], to_agent=row["to_agent"], sender=str(row["sender"]),
        data=json.loads(row["data"]), created_at=moment(row["created_at"]),
    )
