"""A test-only hook: kill the whole service with SIGKILL at a named step, to test crash recovery.

Armed only when RW_TEST_KILL_AT is set (`<step>` or `<step>:<n>` for the n-th time the step is
reached in a worker). Steps are the landing's durable steps (`contribution`, `ledger`, `branch`,
`anchor`, see `verifier.pipeline.landing.crash_point`) and the service's own: `journal` (the
attempt is recorded, the pipeline has not run) and `respond` (the verdict is in, the client has
not been told). The whole process group dies at once, as with `kill -9` of the server.
"""

from __future__ import annotations

import os
import signal

from verifier.pipeline import landing

KILL_ENV = "RW_TEST_KILL_AT"
_remaining: dict[str, int] = {}


def install() -> None:
    spec = os.environ.get(KILL_ENV, "")
    if not spec:
        return
    step, _, nth = spec.partition(":")
    _remaining[step] = int(nth or "1")
    landing.crash_point = point


def point(step: str) -> None:
    """Called at each named step; dies here when armed for it."""
    if step not in _remaining:
        return
    _remaining[step] -= 1
    if _remaining[step] == 0:
        os.killpg(os.getpgid(0), signal.SIGKILL)
