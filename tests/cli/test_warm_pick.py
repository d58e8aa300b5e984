"""`rw claim --warm` / `rw work --warm`: which board entry is taken until the Planner's warm pool
serves warm leaves itself (verifier/cli/warm.py)."""

from __future__ import annotations

from typing import Any

from verifier.cli.warm import pick_warm


def entry(leaf_id: str, kind: str = "extract", state: str = "open", expires: str = "2026-12-01T00:00:00Z",
          **extra: Any) -> dict[str, Any]:
    return {"leaf_id": leaf_id, "kind": kind, "state": state, "expires_at": expires, **extra}


def test_an_open_extract_leaf_marked_warm_comes_first() -> None:
    board = [entry("extract-a", expires="2026-11-30T13:00:00Z"), entry("extract-b", warm=True),
             entry("link-c", kind="link", warm=True)]
    assert pick_warm(board) == "extract-b"


def test_otherwise_the_extract_leaf_that_expires_soonest() -> None:
    board = [entry("extract-late"), entry("extract-soon", expires="2026-11-30T13:00:00Z"),
             entry("extract-claimed", state="claimed", expires="2026-11-30T12:30:00Z")]
    assert pick_warm(board) == "extract-soon"


def test_no_open_extract_leaf_means_none() -> None:
    assert pick_warm([entry("link-1", kind="link"), entry("extract-2", state="accepted")]) is None
    assert pick_warm([]) is None
