"""A test-only `rw serve` whose workers kill the whole server at a named step.

The step comes from RW_TEST_KILL_AT (`<step>` or `<step>:<n>`, the n-th time the step is reached
in a worker), read here, in test code: production never reads a crash point from the environment.
Steps are the writer's durable steps (`contribution`, `ledger`, `branch`, `anchor`) and the
service's own (`journal`, `respond`). The whole process group dies at once, as with `kill -9`.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

from verifier.service.app import build_worker_app
from verifier.service.config import ServiceConfig
from verifier.service.server import serve

KILL_ENV = "RW_TEST_KILL_AT"
FACTORY = "tests.support.crash_server:worker_app"


class Killer:
    """Dies (SIGKILL to the process group) the n-th time the named step is reached."""

    def __init__(self, spec: str) -> None:
        step, _, nth = spec.partition(":")
        self.step = step
        self.remaining = int(nth or "1")

    def __call__(self, step: str) -> None:
        if step != self.step:
            return
        self.remaining -= 1
        if self.remaining == 0:
            os.killpg(os.getpgid(0), signal.SIGKILL)


def worker_app() -> Any:
    return build_worker_app(Killer(os.environ[KILL_ENV]))


def main(argv: list[str]) -> None:
    port = int(argv[argv.index("--port") + 1])
    workers = int(argv[argv.index("--workers") + 1]) if "--workers" in argv else 1
    config = ServiceConfig(home=Path(os.environ["RW_HOME"]), port=port, workers=workers)
    serve(config, echo=lambda line: print(line, file=sys.stderr), app_factory=FACTORY)


if __name__ == "__main__":
    main(sys.argv[1:])
