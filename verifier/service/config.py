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
    header_timeout_s: float = 10.0  # the whole request head must arrive within this
    body_idle_timeout_s: float = 15.0  # the longest pause allowed while a body streams in
    body_timeout_s: float = 120.0  # the whole body must arrive within this
    max_json_bytes: int = 64 * 1024
    claim_ttl_s: int = 1800  # a claim's default lifetime
    claim_ttl_max_s: int = 7 * 86400
    outage_min_s: float = 60.0  # shorter outages do not extend leaves
    heartbeat_s: float = 5.0

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
