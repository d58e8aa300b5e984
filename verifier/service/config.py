"""The service's settings: where it listens, which Host names it answers, its limits and timeouts.

`rw serve` builds one `ServiceConfig` from its options and hands it to the worker processes as JSON
in RW_SERVICE_CONFIG (granian imports the app afresh in each worker).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from verifier.constants import (
    BODY_IDLE_TIMEOUT_S,
    BODY_TIMEOUT_S,
    CLAIM_TTL_MAX_S,
    CLAIM_TTL_S,
    HEADER_TIMEOUT_S,
    HEARTBEAT_S,
    MAX_JSON_BODY_BYTES,
    OUTAGE_MIN_S,
)
from verifier.errors import FormatError
from verifier.store.fetcher import Fetcher, HttpFetcher, OfflineFetcher
from verifier.store.home import Home
from verifier.wiring import open_home

CONFIG_ENV = "RW_SERVICE_CONFIG"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class ServiceConfig:
    home: Path
    host: str = "127.0.0.1"
    port: int = 8765
    allowed_hosts: tuple[str, ...] = ()  # Host header names besides the loopback ones
    workers: int = 2
    header_timeout_s: float = HEADER_TIMEOUT_S
    body_idle_timeout_s: float = BODY_IDLE_TIMEOUT_S
    body_timeout_s: float = BODY_TIMEOUT_S
    max_json_bytes: int = MAX_JSON_BODY_BYTES
    claim_ttl_s: int = CLAIM_TTL_S
    claim_ttl_max_s: int = CLAIM_TTL_MAX_S
    outage_min_s: float = OUTAGE_MIN_S
    heartbeat_s: float = HEARTBEAT_S

    def host_names(self) -> frozenset[str]:
        names = {*LOOPBACK_NAMES, *(name.lower() for name in self.allowed_hosts)}
        if self.host not in ("0.0.0.0", "::"):  # noqa: S104 - compared, never bound here
            names.add(self.host.lower())
        return frozenset(names)

    def to_env(self) -> str:
        data: dict[str, Any] = asdict(self)
        data["home"] = str(self.home)
        data["allowed_hosts"] = list(self.allowed_hosts)
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_env(cls) -> ServiceConfig:
        raw = os.environ.get(CONFIG_ENV)
        if not raw:
            raise FormatError(f"{CONFIG_ENV} is not set: start the service with `rw serve`")
        data = json.loads(raw)
        data["home"] = Path(data["home"])
        data["allowed_hosts"] = tuple(data["allowed_hosts"])
        return cls(**data)


@dataclass
class Runtime:
    """What a worker builds once from its config: the home and its fetcher."""

    config: ServiceConfig
    home: Home = field(init=False)
    fetcher: Fetcher = field(init=False)
    # How this worker checks a scout's URLs: `online` or `offline`, read once at start-up (a
    # changed config.json takes effect at the next `rw serve`). The leaf payload says it, so
    # `rw check` predicts with the same mode.
    fetch_mode: str = field(init=False)

    def __post_init__(self) -> None:
        self.home = open_home(self.config.home)
        mode = os.environ.get("RW_FETCH", self.home.settings.fetch)
        self.fetch_mode = "offline" if mode == "offline" else "online"
        if mode == "offline":
            self.fetcher = OfflineFetcher()
        else:
            self.fetcher = HttpFetcher(user_agent=self.home.settings.user_agent,
                                       allow_private_addresses=self.home.settings.allow_private_addresses)
