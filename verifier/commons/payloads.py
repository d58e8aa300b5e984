"""What Commons stores that agents (or people) can be shown, as leak-test payloads (issue 10:
`rw leaks` searches the Commons database and every payload it stores).

Every table of the Commons is read, the home's SQLite file (`HomeLayout.commons`) or the PostgreSQL database
config.json names: messages (bodies and their JSON data, which carry digests), claims, the
submission journal (verdicts), the notifier's memory, outages (and on PostgreSQL the leases,
instances and identities too). A row of a table with a `project` column belongs to the project
named there (rows with no project, such as direct messages without one, are searched for every
project). Each row becomes one payload, `commons:<table>:<n>`, its columns as JSON with
JSON-in-text columns kept verbatim, so every spelling the leak search knows is found as it was
stored.

Only read: the SQLite file is opened read-only, PostgreSQL is sent SELECTs only.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verifier.store.home import HomeLayout

if TYPE_CHECKING:
    from verifier.commons.pgdb import PgDatabase



def _tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                        "ORDER BY name").fetchall()
    return [str(row[0]) for row in rows]


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [str(row[1]) for row in conn.execute(f'PRAGMA table_info("{table}")').fetchall()]


def _payload(columns: list[str], row: tuple[Any, ...] | Any) -> bytes:
    value = dict(zip(columns, tuple(row), strict=True))
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8")


def postgres_payloads(db: PgDatabase, slug: str) -> dict[str, bytes]:
    """`commons_payloads` of a PostgreSQL Commons: every table of its schema, read with SELECTs."""
    tables = [str(row[0]) for row in db.read(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
        "AND table_type = 'BASE TABLE' ORDER BY table_name")]
    payloads: dict[str, bytes] = {}
    for table in tables:
        columns = [str(row[0]) for row in db.read(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND table_name = ? ORDER BY ordinal_position", (table,))]
        where, params = (" WHERE project = ? OR project IS NULL", (slug,)) if "project" in columns else ("", ())
        rows = db.read(f'SELECT * FROM "{table}"{where} ORDER BY 1', params)  # noqa: S608 - names from the catalogue
        for index, row in enumerate(rows):
            payloads[f"commons:{table}:{index}"] = _payload(columns, row)
    return payloads


def commons_payloads(home_root: Path, slug: str, *, postgres: PgDatabase | None = None) -> dict[str, bytes]:
    """Every Commons row that belongs to `slug` (or to no project), by `commons:<table>:<n>`; from
    `postgres` when the Commons is there, else from the SQLite file in the home."""
    if postgres is not None:
        return postgres_payloads(postgres, slug)
    path = HomeLayout(home_root).commons
    if not path.exists():
        return {}
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        payloads: dict[str, bytes] = {}
        for table in _tables(conn):
            columns = _columns(conn, table)
            where: str = ""
            params: tuple[str, ...] = ()
            if "project" in columns:
                where, params = " WHERE project = ? OR project IS NULL", (slug,)
            cursor = conn.execute(f'SELECT * FROM "{table}"{where} ORDER BY rowid', params)  # noqa: S608 - names from sqlite_master
            for index, row in enumerate(cursor):
                payloads[f"commons:{table}:{index}"] = _payload(columns, row)
        return payloads
    finally:
        conn.close()
