"""Step 6, hold routing (design §8): objects of a held type go to queue/<type>/ instead of the
corpus, at the same relative path, so approving one is a move and nothing else. Pure."""

from __future__ import annotations

from collections.abc import Sequence

from verifier.formats.layout import HOLD_OF, classify, queue_path


def route(writes: dict[str, bytes | None], holds: Sequence[str]) -> tuple[dict[str, bytes | None], list[str]]:
    """Return (routed writes, sorted hold types used). Deletions are never routed."""
    routed: dict[str, bytes | None] = {}
    used: set[str] = set()
    for path, data in writes.items():
        kind = classify(path)
        hold = HOLD_OF.get(kind.type) if kind else None
        if data is not None and hold is not None and hold in holds:
            routed[queue_path(hold, path)] = data
            used.add(hold)
        else:
            routed[path] = data
    return routed, sorted(used)
