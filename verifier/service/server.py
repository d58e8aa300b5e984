"""`rw serve`: take the home's service lock, recover, then run the app on granian's workers.

One server per home (an exclusive lock on locks/service.lock, held for the life of the main
process), so start-up recovery knows every attempt it finds running belongs to a dead process.
The workers beat the heartbeat the outage window is measured from (the main process starts no
thread before granian forks them: a lock held by a thread at fork time stays held forever in the
child); the main process writes a last beat when the server stops cleanly. A worker that dies
makes granian stop the whole server (no respawn): whatever supervises `rw serve` restarts it,
and recovery runs again. Crash-only by design.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from granian.constants import HTTPModes, Interfaces
from granian.http import HTTP1Settings
from granian.server import Server

from verifier.commons.backend import commons_database
from verifier.commons.local import LocalCommons
from verifier.constants import SERVICE_LOCK_WAIT_S
from verifier.deploy.instances import warm
from verifier.errors import ConflictError
from verifier.messages.notifier import Notifier
from verifier.pipeline.digest import digest
from verifier.service.config import CONFIG_ENV, ServiceConfig
from verifier.service.core import clock
from verifier.service.journal import Journal
from verifier.service.outage import Heartbeat
from verifier.service.recovery import RecoveryReport, recover
from verifier.store.home import Home
from verifier.wiring import open_home


@contextlib.contextmanager
def service_lock(home: Home, wait_s: float = SERVICE_LOCK_WAIT_S) -> Iterator[None]:
    path = home.layout.named_lock("service")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + wait_s
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError as exc:
                if time.monotonic() > deadline:
                    raise ConflictError(f"another `rw serve` is running on {home.root}") from exc
                time.sleep(0.2)
        yield
    finally:
        os.close(fd)  # closing drops the lock


def start_up(home: Home, config: ServiceConfig) -> RecoveryReport:
    db = commons_database(home)
    commons = LocalCommons(db, home.identities)
    journal = Journal(db, home.settings.backends.instance, live_s=home.settings.backends.lease_s)
    report = recover(home, journal, commons, Notifier(home, commons, db, digest), Heartbeat(db), now=clock(),
                     outage_min_s=config.outage_min_s)
    db.close()
    warm(home, clock())  # several instances: the workers fork with every project parsed
    return report


WORKER_APP = "verifier.service.app:worker_app"


def serve(config: ServiceConfig, *, echo: Callable[[str], None], app_factory: str = WORKER_APP) -> None:
    """Recover, then serve. `app_factory` names what each worker imports (tests name one that
    hands the service a crash point; production never does)."""
    home = open_home(config.home)
    with service_lock(home):
        for line in start_up(home, config).lines():
            echo(f"recovery: {line}")
        os.environ[CONFIG_ENV] = config.to_env()
        os.environ["RW_SERVICE_PARENT"] = str(os.getpid())
        echo(f"serving {home.root} on http://{_url_host(config.host)}:{config.port} with {config.workers} worker(s)")
        try:
            Server(
                app_factory, address=config.host, port=config.port,
                interface=Interfaces.ASGI, workers=config.workers, http=HTTPModes.http1, websockets=False,
                http1_settings=HTTP1Settings(header_read_timeout=int(config.header_timeout_s * 1000)),
                log_access=False, respawn_failed_workers=False, factory=True, working_dir=Path.cwd(),
            ).serve()
        finally:
            # The workers are gone (granian forks them: this process ran no thread that could
            # have held a lock across the fork, and now writes the last heartbeat itself).
            Heartbeat(commons_database(home)).beat(clock(), stopped=True)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
