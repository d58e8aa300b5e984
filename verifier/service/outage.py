"""Outage windows (design §11: "leaf expiry is extended by the outage window").

The service's main process writes a heartbeat every few seconds; when it starts, the time since
the last heartbeat (or since a clean stop) is the window in which nobody could submit. When that
window is long enough to matter, it is recorded in Commons, every claim live at its start keeps
the time it lost, and every leaf still open at its start gets its expiry pushed back by the same
amount: one verifier commit per project rewriting those contracts, with its ledger row.

The heartbeat moves only after every project is extended, so a restart that dies half-way through
extends again from the same last heartbeat: a leaf may get the window twice (generous, and the
branch, ledger and anchor still agree), never not at all.
"""

from __future__ import annotations

from datetime import datetime

from verifier.commons.adapter import Commons, Outage
from verifier.commons.db import CommonsDB
from verifier.commons.local import epoch, moment
from verifier.formats.base import iso
from verifier.formats.entries import LeafEntry
from verifier.formats.leaf import parse_leaf
from verifier.formats.wording import count
from verifier.formats.yamlout import dump_yaml
from verifier.pipeline.writer import ProjectWriter
from verifier.state.layout import leaf_path
from verifier.state.project import ProjectView
from verifier.store.home import Home

SCHEMA = """
CREATE TABLE IF NOT EXISTS service_heartbeat (
  id INTEGER PRIMARY KEY CHECK (id = 1), alive_at REAL NOT NULL, stopped INTEGER NOT NULL)
"""


class Heartbeat:
    def __init__(self, db: CommonsDB) -> None:
        self.db = db
        db.ensure(SCHEMA)

    def beat(self, now: datetime, *, stopped: bool = False) -> None:
        with self.db.write() as conn:
            conn.execute("INSERT INTO service_heartbeat VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET "
                         "alive_at = excluded.alive_at, stopped = excluded.stopped", (epoch(now), int(stopped)))

    def last(self) -> datetime | None:
        rows = self.db.read("SELECT alive_at FROM service_heartbeat WHERE id = 1")
        return moment(rows[0]["alive_at"]) if rows else None


def outage_since(last_alive: datetime | None, now: datetime, minimum_s: float) -> Outage | None:
    """The window since the service was last alive, if it is at least `minimum_s` long."""
    if last_alive is None or (now - last_alive).total_seconds() < minimum_s:
        return None
    return Outage(last_alive, now)


def extend_leaves(home: Home, slug: str, outage: Outage, now: datetime) -> list[str]:
    """Push back the expiry of the project's leaves that were open when the outage began."""
    with ProjectWriter.open(home, slug) as writer:
        state = ProjectView(writer.view())
        writes: dict[str, bytes | None] = {}
        leaves: list[str] = []
        for leaf_id in state.leaf_ids:
            if state.is_closed(leaf_id):
                continue
            contract = state.contract(leaf_id)  # an unreadable contract stops the extension: say so
            if contract is None or contract.expires_at <= outage.started_at:
                continue  # it had expired before anyone was kept from working on it
            extended = contract.model_copy(update={"expires_at": contract.expires_at + outage.duration})
            data = dump_yaml(extended.model_dump(mode="json", exclude_none=True))
            parse_leaf(data, leaf_path(leaf_id))  # what we write must read back as a contract
            writes[leaf_path(leaf_id)] = data
            leaves.append(leaf_id)
        if not writes:
            return []
        leaves.sort()
        description = (f"expiry of {count(len(leaves), 'open leaf', 'open leaves')} extended by {outage.duration}, "
                       "the verifier outage "
                       f"from {iso(outage.started_at)} to {iso(outage.ended_at)}: {', '.join(leaves)}")
        writer.land(LeafEntry(at=now, actor="verifier", actor_type="verifier", description=description[:4000]),
                    bookkeeping=writes)
        return leaves


def apply_outage(home: Home, commons: Commons, outage: Outage, now: datetime) -> dict[str, list[str]]:
    commons.record_outage(outage)
    commons.extend_claims(outage)
    return {slug: leaves for slug in home.projects() if (leaves := extend_leaves(home, slug, outage, now))}
