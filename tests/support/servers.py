"""Real servers on loopback for the beyond-one-machine tests (tests.support.devservers): an S3-compatible
server, a throwaway PostgreSQL cluster and `git daemon`, each stopped by the test;
`pytest.skip` names why one cannot start (in CI, RW_REQUIRE_SERVERS=1, a failure instead)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import NoReturn

import pytest

from tests.support import devservers
from tests.support.devservers import free_port, pg_binary, wait_for_port

__all__ = ["free_port", "git_daemon", "pg_binary", "postgres_cluster", "s3_server", "unavailable", "wait_for_port"]


def unavailable(reason: str) -> NoReturn:
    """Skip the test, naming why; in CI (RW_REQUIRE_SERVERS=1, set by .ci/run) fail instead."""
    if os.environ.get("RW_REQUIRE_SERVERS") == "1":
        pytest.fail(f"{reason} (RW_REQUIRE_SERVERS=1: CI must run this test)")
    pytest.skip(reason)


@contextmanager
def _or_skip(server: AbstractContextManager[str]) -> Iterator[str]:
    try:
        value = server.__enter__()
    except devservers.Unavailable as exc:
        unavailable(str(exc))
    try:
        yield value
    except BaseException as exc:
        if not server.__exit__(type(exc), exc, exc.__traceback__):
            raise
    else:
        server.__exit__(None, None, None)


def s3_server() -> AbstractContextManager[str]:
    """An S3-compatible server (moto, a separate process speaking HTTP); yields its endpoint URL."""
    return _or_skip(devservers.s3_server())


def postgres_cluster() -> AbstractContextManager[str]:
    """A throwaway PostgreSQL cluster; yields its connection string."""
    return _or_skip(devservers.postgres_cluster())


def git_daemon(base: Path) -> AbstractContextManager[str]:
    """`git daemon` serving the bare repositories under `base`; yields `git://127.0.0.1:PORT`."""
    return _or_skip(devservers.git_daemon(base))
