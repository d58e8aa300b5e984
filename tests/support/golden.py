"""The golden checks' base project: one included plain-text source (its files, id, text and
sentences) and the fixed time the golden cases run at."""

from __future__ import annotations

from datetime import UTC, date, datetime

from verifier.agentkit.objects import source_files

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
TEXT = ("Seven of eleven teams paid for a verification layer. Two paid for generated rollouts. "
        "The median contract was USD 180,000 a year. Buyers cited liability as the main reason. "
        "Anchor reports 14 paying customers.")
URL = "https://notes.example.org/a.txt"
BASE_FILES = source_files(url=URL, data=TEXT.encode(), media_type="text/plain", fetched_by="curator",
                          retrieved_at=NOW, language="en", rights="public", published=date(2026, 1, 1),
                          title=None, leaf_id=None, status="included")
SOURCE_ID = next(p for p in BASE_FILES if p.endswith(".yaml")).rsplit("/", 1)[1][:-5]
SENTENCES = [s.strip() + "." for s in TEXT.split(".") if s.strip()]
