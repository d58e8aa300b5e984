"""Which leaf `rw claim SLUG --warm` takes: one small function, so the Planner's warm-leaf pool can
replace the choice in one place.

Until the pool serves warm leaves itself, a warm leaf is an open extract leaf on the board; one the
board marks `warm` comes first, then the one that expires soonest (it is the one most likely to be
wasted), then by id so the choice is repeatable.
"""

from __future__ import annotations

from typing import Any


def pick_warm(leaves: list[dict[str, Any]]) -> str | None:
    """The leaf id to claim from the open board entries, or None when there is none."""
    open_extracts = [leaf for leaf in leaves if leaf.get("kind") == "extract" and leaf.get("state") == "open"]
    if not open_extracts:
        return None
    best = min(open_extracts, key=lambda leaf: (not leaf.get("warm", False), str(leaf.get("expires_at", "")),
                                               str(leaf.get("leaf_id", ""))))
    return str(best["leaf_id"])
