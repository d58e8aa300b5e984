"""The ASGI application: the guard every request passes, the routes, and errors as JSON.

The guard runs before routing and refuses, whatever the endpoint: a Host header that does not name
this service (421), anything that looks like a token in the URL (400), an Origin from elsewhere or
a browser's cross-site side effect (403). It also writes the access log: method, path, status,
time and the authenticated agent; never a header, never a query string, never a token.

Behind the guard, with several instances, a project's writes go to the instance that writes it
(verifier.deploy.forwarding), and each worker beats, keeps its leases renewed between writes and
spreads the projects (verifier.deploy.spreading).

`worker_app` is what granian imports in each worker process (`rw serve`); `create_app` builds the
same application from a config, for tests.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from verifier.constants import NOTIFY_READ_WAIT_S
from verifier.deploy.forwarding import Forwarder
from verifier.deploy.spreading import keep_instance
from verifier.errors import VerifierError
from verifier.pipeline.writer import CrashPoint, no_crash
from verifier.service.agent_routes import AGENT_ROUTES
from verifier.service.auth import host_name, origin_allowed, repeated_parameter, token_in_url
from verifier.service.client_routes import CLIENT_ROUTES
from verifier.service.config import ServiceConfig
from verifier.service.core import Service, clock
from verifier.service.errors import ApiError, error_response
from verifier.service.outage import Heartbeat
from verifier.service.people_routes import PEOPLE_ROUTES
from verifier.service.routes import ROUTES
from verifier.service.skill_routes import SKILL_ROUTES
from verifier.service.token_routes import TOKEN_ROUTES
from verifier.service.warm import WARM_ROUTES

access_log = logging.getLogger("rw.access")
log = logging.getLogger("rw.service")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class Guard:
    """Host, URL and origin checks before anything else, and the access log after."""

    def __init__(self, app: ASGIApp, config: ServiceConfig) -> None:
        self.app = app
        self.names = config.host_names()

    def check(self, scope: Scope, headers: Headers) -> ApiError | None:
        for name in ("host", "authorization", "origin", "content-type"):  # read one way by us, another by a proxy
            count = len(headers.getlist(name))
            if count > 1:
                return ApiError(400, "duplicate_header", f"the request has {count} {name} headers; send one")
        host = host_name(headers.get("host"))
        if host is None or host not in self.names:
            return ApiError(421, "wrong_host", "this service does not answer to that Host name; use one of "
                                               + ", ".join(sorted(self.names)))
        why = token_in_url(scope.get("path", ""), scope.get("query_string", b""))
        if why is not None:
            return ApiError(400, "token_in_url", f"{why}: tokens are accepted only in `Authorization: Bearer`; "
                                                 "this request was refused and the token should be rotated")
        repeated = repeated_parameter(scope.get("query_string", b""))
        if repeated is not None:
            return ApiError(400, "bad_query", f"the query parameter {repeated[:40]!r} is given more than once; "
                                              "give it once")
        origin = headers.get("origin")
        if origin is not None and not origin_allowed(origin, self.names, headers.get("host")):
            return ApiError(403, "cross_origin", "requests from another origin are refused")
        if scope["method"] not in SAFE_METHODS and headers.get("sec-fetch-site") == "cross-site":
            return ApiError(403, "cross_origin", "cross-site requests cannot cause side effects")
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = [0]

        async def send_and_note(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
            await send(message)

        error = self.check(scope, Headers(scope=scope))
        if error is not None:
            await error_response(error)(scope, receive, send_and_note)
        else:
            await self.app(scope, receive, send_and_note)
        # Escaped: a path is the client's text, and a newline in it must not forge a log line.
        shown = "[refused URL]" if error is not None and error.code == "token_in_url" else \
            scope.get("path", "").encode("unicode_escape").decode("ascii")
        actor = scope.get("state", {}).get("actor", "-")
        access_log.info("%s %s %d %.1fms %s", scope["method"], shown[:200], status[0],
                        (time.perf_counter() - started) * 1000, actor)


async def error_answer(_request: Request, exc: Exception) -> Response:
    return error_response(exc)  # the one map from errors to answers (verifier.service.errors)


def _beat(heartbeat: Heartbeat, every_s: float, stop: threading.Event) -> None:
    while not stop.wait(every_s):
        with contextlib.suppress(Exception):  # a missed beat only makes a later outage look longer
            heartbeat.beat(clock())


def create_app(config: ServiceConfig, service: Service | None = None) -> ASGIApp:
    built: list[Service] = [service] if service is not None else []

    def the_service() -> Service:
        if not built:
            built.append(Service(config))
        return built[0]

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        app.state.service = svc = the_service()
        heartbeat = Heartbeat(svc.db)
        stop = threading.Event()
        threads = [threading.Thread(target=_beat, args=(heartbeat, config.heartbeat_s, stop), daemon=True,
                                    name="rw-heartbeat"),
                   # several instances: beat, keep this worker's leases renewed, spread the projects
                   threading.Thread(target=keep_instance, args=(svc.home, stop), daemon=True, name="rw-instance")]
        for thread in threads:
            thread.start()
        try:
            yield
        finally:
            stop.set()
            svc.notifying.close(NOTIFY_READ_WAIT_S)  # what is still queued is told before a clean stop
            for thread in threads:
                thread.join(timeout=5)
            with contextlib.suppress(Exception):
                heartbeat.beat(clock(), stopped=True)

    routes = [*AGENT_ROUTES, *WARM_ROUTES, *SKILL_ROUTES, *PEOPLE_ROUTES, *TOKEN_ROUTES, *ROUTES, *CLIENT_ROUTES]
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={
        VerifierError: error_answer, HTTPException: error_answer, Exception: error_answer})
    forwarder = Forwarder(app, lambda: the_service().home, idle_s=config.body_idle_timeout_s,
                          total_s=config.body_timeout_s)
    return Guard(forwarder, config)


def _exit_with_parent(parent: int) -> None:
    """A worker outlives a `kill -9` of the main process otherwise, still holding the socket."""
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(1)


def configure_logging() -> None:
    root = logging.getLogger("rw")
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        root.propagate = False


def worker_app() -> Any:
    """The application granian builds in each worker (factory mode)."""
    return build_worker_app(no_crash)


def build_worker_app(crash_point: CrashPoint) -> Any:
    """A worker's application whose writers get `crash_point` (tests: kill at a named step)."""
    configure_logging()
    config = ServiceConfig.from_env()
    parent = int(os.environ.get("RW_SERVICE_PARENT", "0"))
    if parent:
        threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True, name="rw-parent-watch").start()
    return create_app(config, Service(config, crash_point=crash_point))
