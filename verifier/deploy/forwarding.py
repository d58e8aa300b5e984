"""Several instances (docs/deploy.md): a write for a project goes to the instance that writes it,
the live holder of its lease, or, when nobody holds it, the instance the placement rule names
(verifier.deploy.spreading.route). Reads are answered here (verifier.deploy.instances keeps a
non-holder's cache fresh from the git host).

Forwarded, each to that instance's `instance_address`, the answer relayed as it came:
- a submission (POST /projects/{slug}/leaves/{leaf}/submissions), its body read here within the
  endpoint's own caps and time limits;
- a person's git push: its discovery (GET /projects/{slug}.git/info/refs?service=git-receive-pack)
  and the push itself (POST /projects/{slug}.git/git-receive-pack), its body spooled to a
  temporary file within the git endpoint's cap. Not a redirect: git (libcurl) drops the
  Authorization header when it follows a redirect to another host or port.

A forwarded request carries `X-RW-Forwarded-By: <this instance>` and is never forwarded again: an
instance that receives one for a project it does not hold answers as if alone (its writer refuses
with 503 naming the holder; the client retries). An instance that does not answer is a 503 too:
if it held the lease, the lease runs out within lease_s; either way it stops beating, and the
retry is placed on an instance that is alive.
"""

from __future__ import annotations

import http.client
import logging
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO
from urllib.parse import urlsplit

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from verifier.constants import FORWARD_TIMEOUT_S, MAX_FORM_BYTES, MAX_RECEIVE_REQUEST, RETRY_SOON_S
from verifier.deploy.spreading import route
from verifier.service.errors import SECURITY_HEADERS, ApiError, error_response
from verifier.service.githttp import spool_body
from verifier.service.limits import chunks, declared_length, too_large
from verifier.store.home import Home

FORWARDED_BY = "x-rw-forwarded-by"
_SUBMISSION = re.compile(r"^/projects/(?P<slug>[a-z0-9][a-z0-9-]{0,63})/leaves/[^/]{1,64}/submissions$")
_PUSH_DISCOVERY = re.compile(r"^/projects/(?P<slug>[a-z0-9][a-z0-9-]{0,63})\.git/info/refs$")
_PUSH = re.compile(r"^/projects/(?P<slug>[a-z0-9][a-z0-9-]{0,63})\.git/git-receive-pack$")
# Hop-by-hop headers (RFC 9110 §7.6.1) and the ones this relay sets itself.
_NOT_RELAYED = frozenset({"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
                          "proxy-authorization", "proxy-authenticate", "host", "content-length", FORWARDED_BY})
log = logging.getLogger("rw.service")


@dataclass(frozen=True)
class Relayed:
    status: int
    headers: list[tuple[str, str]]
    body: bytes


class Forwarder:
    """ASGI middleware in front of the routes: sends a project's writes to its lease holder."""

    def __init__(self, app: ASGIApp, home: Callable[[], Home], *, idle_s: float, total_s: float) -> None:
        self.app = app
        self.home = home
        self.idle_s, self.total_s = idle_s, total_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.home().settings.backends.instance is None:
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        found = _forwarded_write(request)
        if found is None or FORWARDED_BY in request.headers:
            await self.app(scope, receive, send)
            return
        slug, is_push = found
        try:
            target = await run_in_threadpool(route, self.home(), slug)
        except Exception as exc:  # the Commons is away: the writer here answers (it needs it too)
            log.warning("placing a write of %s failed: %s", slug, exc)
            target = None
        if target is None or not target.address.startswith(("http://", "https://")):
            await self.app(scope, receive, send)
            return
        where = target.address.rstrip("/")
        body: IO[bytes] | None = None
        try:
            body = await (spool_body(request, MAX_RECEIVE_REQUEST, idle_s=self.idle_s, total_s=self.total_s,
                                     what="a git-receive-pack request body") if is_push else self._form(request))
            relayed = await run_in_threadpool(relay, where, request, body, self.home().settings.backends.instance)
        except ApiError as exc:
            await error_response(exc)(scope, receive, send)
            return
        except (OSError, http.client.HTTPException) as exc:
            log.warning("forwarding a write of %s to %s failed: %s", slug, where, exc)
            await error_response(ApiError(
                503, "retry_later", f"project {slug} is written by instance {target.instance} ({where}), which did "
                                    "not answer; nothing was kept: try again (its lease runs out if it is gone)",
                headers={"retry-after": str(RETRY_SOON_S)}))(scope, receive, send)
            return
        finally:
            if body is not None:
                body.close()
        await send({"type": "http.response.start", "status": relayed.status,
                    "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in relayed.headers]
                    + [(b"content-length", str(len(relayed.body)).encode())]})
        await send({"type": "http.response.body", "body": relayed.body})

    async def _form(self, request: Request) -> IO[bytes]:
        length = declared_length(request.headers)
        if length is not None and length > MAX_FORM_BYTES:
            raise too_large(MAX_FORM_BYTES, "the submission body")
        spool: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=MAX_FORM_BYTES)  # noqa: SIM115 - caller closes
        async for chunk in chunks(request.stream(), cap=MAX_FORM_BYTES, what="the submission body",
                                  idle_s=self.idle_s, total_s=self.total_s):
            spool.write(chunk)
        spool.seek(0)
        return spool


def _forwarded_write(request: Request) -> tuple[str, bool] | None:
    """(the project, whether it is a git push) of a request that writes a project; None otherwise."""
    path, method = request.url.path, request.method
    if method == "POST" and (found := _SUBMISSION.match(path)):
        return found["slug"], False
    if method == "POST" and (found := _PUSH.match(path)):
        return found["slug"], True
    if method == "GET" and request.query_params.get("service") == "git-receive-pack" \
            and (found := _PUSH_DISCOVERY.match(path)):
        return found["slug"], True
    return None


def relay(where: str, request: Request, body: IO[bytes], instance: str | None) -> Relayed:
    """Send the request with `body` to `where` (the holder's base URL) and read its whole answer."""
    split = urlsplit(where)
    cls = http.client.HTTPSConnection if split.scheme == "https" else http.client.HTTPConnection
    conn = cls(split.netloc, timeout=FORWARD_TIMEOUT_S)
    try:
        length = body.seek(0, 2)
        body.seek(0)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _NOT_RELAYED}
        headers.update({"host": split.netloc, FORWARDED_BY: instance or "", "content-length": str(length)})
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        conn.request(request.method, target, body=body if length else None, headers=headers)
        answer = conn.getresponse()
        data = answer.read()
        kept = [(k, v) for k, v in answer.getheaders() if k.lower() not in _NOT_RELAYED]
        present = {k.lower() for k, _ in kept}
        kept += [(k, v) for k, v in SECURITY_HEADERS.items() if k.lower() not in present]
        return Relayed(answer.status, kept, data)
    finally:
        conn.close()
