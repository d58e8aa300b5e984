"""The client's give-up message states the time it actually spent retrying (issue 23 point 7: "did
not answer for 30 s" came after 15 s, because the client stops when the next wait would overrun
the window)."""

from __future__ import annotations

import re
import time

import pytest

from tests.support.service_harness import free_port
from verifier.client.http import Client
from verifier.errors import Unreachable

# Real `rw` processes, a real service or real git pushes: end to end, so in the slow set.
pytestmark = pytest.mark.slow


def test_the_unreachable_message_states_the_time_actually_waited() -> None:
    waits: list[float] = []
    client = Client(f"http://127.0.0.1:{free_port()}", retry_for_s=3.0,
                    on_retry=lambda _problem, wait: waits.append(wait))
    started = time.monotonic()
    try:
        client.get("/health", auth=False)
    except Unreachable as exc:
        message = str(exc)
    else:
        raise AssertionError("nothing listens on the port, yet the client got an answer")
    elapsed = time.monotonic() - started
    found = re.search(r"did not answer in ([0-9.]+) s of trying \((\d+) attempts?;", message)
    assert found is not None, message
    stated, attempts = float(found.group(1)), int(found.group(2))
    assert stated <= elapsed + 0.05  # never more than was waited
    assert stated >= sum(waits) - 0.05  # and at least the sleeps it took
    assert attempts == len(waits) + 1
    assert "3 s retry window" in message
