"""Which systems hold the verifier's state: the `backends` block of config.json, and the one
factory that turns it into a trace store.

Embedded defaults: traces in $RW_HOME/traces, the Commons in the home (HomeLayout.commons), project
repositories only in $RW_HOME/projects. A deployment beyond one machine (docs/deploy.md) names an
S3-compatible bucket, a PostgreSQL database and per-project git remotes instead. Secrets are never
written here: S3 keys come from the usual AWS environment (AWS_ACCESS_KEY_ID, ...), the PostgreSQL
connection string from the environment variable `dsn_env` names, git credentials from git's own
credential helpers or SSH keys.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal, Protocol

from pydantic import Field

from verifier.constants import COMMONS_POOL_SIZE, LEASE_S
from verifier.errors import FormatError
from verifier.formats.base import Strict
from verifier.formats.trace import TraceRecord


class TracesBackend(Strict):
    kind: Literal["local", "s3"] = "local"
    bucket: str | None = None
    prefix: str = Field(default="traces/", pattern=r"^([A-Za-z0-9._-]+/)*$")
    endpoint_url: str | None = None  # an S3-compatible server (MinIO, Ceph, moto, ...); None: AWS
    region: str | None = None


class CommonsBackend(Strict):
    kind: Literal["sqlite", "postgres"] = "sqlite"
    dsn_env: str = "RW_COMMONS_DSN"  # the environment variable holding the connection string
    # PostgreSQL connections each service process opens at most (verifier.commons.pgdb's pool);
    # instances x workers x pool_size must fit the server's max_connections, or PgBouncer's pool.
    pool_size: int = Field(default=COMMONS_POOL_SIZE, ge=1, le=256)


class Backends(Strict):
    traces: TracesBackend = Field(default_factory=TracesBackend)
    commons: CommonsBackend = Field(default_factory=CommonsBackend)
    # slug -> git URL: the project's branch is pushed there, compare-and-swap, on every landing.
    remotes: dict[str, str] = Field(default_factory=dict)
    # Several instances (docs/deploy.md): this instance's name and address; with a name, a writer
    # holds the project's lease in the PostgreSQL Commons (verifier.deploy.instances).
    instance: str | None = Field(default=None, pattern=r"^[A-Za-z0-9._-]{1,64}$")
    instance_address: str = ""
    lease_s: float = Field(default=LEASE_S, gt=0, le=600)  # the failover time: a dead holder's lease runs out


class TraceBackend(Protocol):
    """What every trace store does (verifier.store.traces.TraceStore, the local default;
    verifier.store.objecttraces.ObjectTraceStore, S3-compatible object storage)."""

    def put(self, record: TraceRecord, files: dict[str, bytes]) -> bool: ...
    def exists(self, trace_id: str) -> bool: ...
    def ids(self) -> list[str]: ...
    def quarantine(self, trace_id: str, agent: str, *, keep: int = ...) -> None: ...
    def quarantined(self, agent: str) -> list[str]: ...
    def read(self, trace_id: str) -> dict[str, bytes]: ...
    def purge(self, trace_id: str) -> None: ...
    def clean_incoming(self) -> int: ...


def trace_store(backend: TracesBackend, root: Path, *, durable: bool) -> TraceBackend:
    """The trace store config.json names (the local folder `root` by default)."""
    if backend.kind == "local":
        from verifier.store.traces import TraceStore  # noqa: PLC0415 - the default needs nothing more

        return TraceStore(root, durable=durable)
    if not backend.bucket:
        raise FormatError("backends.traces.kind is s3 but no bucket is named", "config.json")
    from verifier.store.objecttraces import ObjectTraceStore  # noqa: PLC0415 - boto3 only when used

    return ObjectTraceStore.connect(backend.bucket, prefix=backend.prefix, endpoint_url=backend.endpoint_url,
                                    region=backend.region)


def commons_dsn(backend: CommonsBackend) -> str:
    """The PostgreSQL connection string, from the environment (never from config.json)."""
    dsn = os.environ.get(backend.dsn_env, "")
    if not dsn:
        raise FormatError(f"backends.commons.kind is postgres but ${backend.dsn_env} is not set", "config.json")
    return dsn


# What the backends read from the environment besides the DSN (boto3, libpq, git's transports).
_BACKEND_ENV = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION",
                "AWS_REGION", "AWS_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CA_BUNDLE",
                "PGPASSFILE", "PGSSLROOTCERT", "PGSSLCERT", "PGSSLKEY", "SSH_AUTH_SOCK", "GIT_SSH_COMMAND", "GIT_SSH",
                "GIT_ASKPASS")


def backend_environment(backends: Backends) -> dict[str, str]:
    """The environment variables the configured backends need, as this process has them: handed to
    the processes the verifier starts that write a project (a person's push lands in a git hook)."""
    names = [*_BACKEND_ENV, backends.commons.dsn_env] if backends != Backends() else []
    return {name: os.environ[name] for name in names if name in os.environ}
