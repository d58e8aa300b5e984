"""What Commons stores that agents (or people) can be shown, as leak-test payloads (issue 10:
`rw leaks` searches the Commons database and every payload it stores).

Every table of `$RW_HOME/commons.sqlite3` is read: messages (bodies and their JSON data, which
carry digests), claims, the submission journal (verdicts), the notifier's memory, outages. A row
of a table with a `project` column belongs to the project named there (rows with no project, such
as direct messages without one, are searched for every project). Each row becomes one payload,
`commons:<table>:<n>`, its columns as JSON with JSON-in-text columns kept verbatim, so every
spelling the leak search knows is found as it was stored.

The database is opened read-only: the leak test never creates or changes it.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

COMMONS_FILE = "commons.sqlite3"


def _tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                        "ORDER BY name").fetchall()
    return [str(row[0]) for row in rows]


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [str(row[1]) for row in conn.execute(f'PRAGMA table_info("{table}")').fetchall()]


def commons_payloads(home_root: Path, slug: str) -> dict[str, bytes]:
    """Every Commons row that belongs to `slug` (or to no project), by `commons:<table>:<n>`."""
    path = home_root / COMMONS_FILE
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
                value = dict(zip(columns, row, strict=True))
                payloads[f"commons:{table}:{index}"] = json.dumps(value, sort_keys=True, ensure_ascii=False,
                                                                   default=str).encode("utf-8")
        return payloads
    finally:
        conn.close()
