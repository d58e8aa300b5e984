"""Waiting for a state, never for a time: `until` polls a condition and fails naming what it waited
for. A test that sleeps a fixed time guesses how long the machine takes; on a loaded machine the
guess is wrong and the test flakes, and on an idle one it wastes the difference."""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["until"]


def until(condition: Callable[[], bool], what: str, *, timeout_s: float = 60.0, poll_s: float = 0.05) -> None:
    """Return as soon as `condition()` holds; fail naming `what` after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"never saw: {what}"
        time.sleep(poll_s)
