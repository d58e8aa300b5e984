"""Reading a person's Commons inbox in tests: the steward's "needs you" messages (issue 22)."""

from __future__ import annotations

from verifier.commons.db import Database
from verifier.commons.local import LocalCommons
from verifier.store.home import COMMONS_FILE, Home


def needs_you(home: Home, handle: str, event: str | None = None) -> list[tuple[str, dict[str, object]]]:
    """(body, data) of every `needs_you` message in `handle`'s inbox, of `event` when given."""
    db = Database(home.root / COMMONS_FILE)
    try:
        messages = LocalCommons(db, home.identities).inbox(handle, limit=1000)
    finally:
        db.close()
    return [(m.body, m.data) for m in messages
            if m.kind == "needs_you" and (event is None or m.data.get("event") == event)]
