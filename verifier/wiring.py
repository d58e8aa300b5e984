"""The one wiring root: builds a home's edges from its settings and hands them in.

Every process that opens a home (the `rw` commands, `rw serve` and its workers, the push hooks, the
benchmarks) opens it here. From config.json this module picks the identity registry (a file, or
the PostgreSQL Commons shared by every instance), the trace store (a folder, or S3-compatible
object storage) and the deployment seams of the one writer (verifier.store.home.Deployment: the
lease guard of several instances, the group push to a project's git host). It also sets the one
process-wide switch the settings name, libgit2's fsync, explicitly here rather than as a side
effect of constructing a `Home`.

Nothing below the doors imports verifier.deploy: the writer only calls the seams it is given.
"""

from __future__ import annotations

from pathlib import Path

from verifier.store.backends import commons_dsn
from verifier.store.gitrepo import set_durable
from verifier.store.home import CrashPoint, Deployment, Home, Settings
from verifier.store.identities import Identities


def _no_crash(_step: str) -> None:
    """Production's crash point: nothing happens."""


def _identities(root: Path, settings: Settings) -> Identities | None:
    commons = settings.backends.commons
    if commons.kind != "postgres":
        return None  # the embedded registry, identities.json (Home's default)
    from verifier.commons.pgidentities import PgIdentities  # noqa: PLC0415 - psycopg only when used

    return PgIdentities(commons_dsn(commons), seed=root / "identities.json")


def _deployment(settings: Settings) -> Deployment | None:
    backends = settings.backends
    if not backends.remotes and backends.instance is None:
        return None
    from verifier.deploy.instances import Instance  # noqa: PLC0415 - psycopg only for several instances
    from verifier.deploy.publishing import publish  # noqa: PLC0415

    # The lease guard is this home's Instance: it owns what the process knows of its leases.
    return Deployment(lease_guard=Instance() if backends.instance is not None else None, publish_staged=publish,
                      hosted=frozenset(backends.remotes))


def open_home(root: Path | None = None, *, crash_point: CrashPoint = _no_crash) -> Home:
    """The home at `root` (RW_HOME by default), wired as its config.json says."""
    root = root if root is not None else Home.root_from_env()
    settings = Home.read_settings(root)
    set_durable(settings.durable)
    return Home(root, crash_point=crash_point, identities=_identities(root, settings),
                deployment=_deployment(settings))
