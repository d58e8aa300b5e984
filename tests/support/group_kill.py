"""A process that lands a group of submissions and dies (os._exit, as SIGKILL would leave it) at
the n-th time the writer reaches a durable step: the group-commit kill tests run it.

    python -m tests.support.group_kill HOME SUBMISSIONS.pickle STEP N
"""

from __future__ import annotations

import os
import pickle
import sys
from pathlib import Path

from tests.support.world import NOW, SLUG
from verifier.pipeline.submit import land_group, prepare
from verifier.store.fetcher import OfflineFetcher
from verifier.wiring import open_home

KILLED = 137


def main(home_root: Path, submissions: Path, step: str, nth: int) -> None:
    home = open_home(home_root)
    seen = 0

    def die(at: str) -> None:
        nonlocal seen
        if at == step:
            seen += 1
            if seen == nth:
                os._exit(KILLED)  # no finally, no cleanup: what a kill leaves

    home.crash_point = die
    ready = [prepare(home, submission, now=NOW, fetcher=OfflineFetcher())
             for submission in pickle.loads(submissions.read_bytes())]
    land_group(home, SLUG, ready)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4]))
