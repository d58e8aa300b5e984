"""Git's smart HTTP protocol for each project (`git clone http://HOST/projects/SLUG.git`), spoken by
git itself: every request is handed to `git http-backend` as a CGI subprocess, bodies streamed both
ways. Nothing here parses the git protocol; it only decides who may run which service.

- Reading (`git-upload-pack`: clone, fetch) is open, like every other read of a project.
- Writing (`git-receive-pack`: push) needs a person's bearer token (identity type `human`); an
  agent's token gets 403 (agents submit patches to the verifier, never push). The token is handed
  to git as `RW_PUSH_TOKEN` so the repository's pre-receive hook can authenticate the pusher and run
  the verifier on what is pushed. A repository without a pre-receive hook refuses every push (fail
  closed: without the hook, a push would move the branch past the verifier).
- Only the smart protocol's three paths exist; the dumb protocol's file paths are 404.
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
import subprocess
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import IO, cast

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from verifier.constants import MAX_RECEIVE_REQUEST, MAX_UPLOAD_REQUEST
from verifier.errors import NotFound
from verifier.formats.base import SLUG_RE
from verifier.service.auth import bearer_token
from verifier.service.core import Service
from verifier.service.errors import SECURITY_HEADERS, ApiError
from verifier.store.backends import backend_environment

log = logging.getLogger("rw.service")
UPLOAD, RECEIVE = "git-upload-pack", "git-receive-pack"
SMART_PATHS = frozenset({"info/refs", UPLOAD, RECEIVE})
RECEIVE_TIME_FACTOR = 10  # a push may take this many times the service's body timeout
CHUNK = 64 * 1024
# Headers git's CGI may set that we pass on; anything else it prints stays on the server.
_PASSED_HEADERS = frozenset({"content-type", "cache-control", "expires", "pragma", "content-encoding"})


def backend_path() -> str:
    """`git http-backend` lives in git's exec path, not on PATH."""
    try:
        exec_path = subprocess.run(["git", "--exec-path"], capture_output=True, text=True,
                                   check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as exc:
        raise ApiError(503, "git_unavailable", "git is not installed on this server") from exc
    candidate = Path(exec_path) / "git-http-backend"
    if not candidate.exists():
        raise ApiError(503, "git_unavailable", "git http-backend is not installed on this server")
    return str(candidate)


_BACKEND: list[str] = []


def _backend() -> str:
    if not _BACKEND:
        _BACKEND.append(backend_path())
    return _BACKEND[0]


def service_of(rest: str, query: str) -> str:
    """Which git service a request runs; 404 for anything but the smart protocol's paths."""
    if rest not in SMART_PATHS:
        raise NotFound("only git's smart HTTP protocol is served here", code="not_found")
    if rest == "info/refs":
        wanted = dict(part.partition("=")[::2] for part in query.split("&") if part).get("service")
        if wanted not in (UPLOAD, RECEIVE):
            raise NotFound("the dumb HTTP protocol is not served; use a git that speaks smart HTTP", code="not_found")
        return wanted
    return rest


def _has_hook(repo: Path) -> bool:
    hook = repo / "hooks" / "pre-receive"
    return hook.is_file() and os.access(hook, os.X_OK)


async def _authorize_push(request: Request, svc: Service, repo: Path) -> str:
    """The pusher's token if they may push: a person's token and a repository with its hook."""
    token = bearer_token(request.headers.get("authorization"))
    actor = await run_in_threadpool(svc.authenticate, token)
    request.state.actor = actor.handle
    if actor.type != "human":
        raise ApiError(403, "push_forbidden", "agents do not push: claim a leaf and submit a patch with its trace "
                                              "(rw submit); only people push, and their pushes are verified too")
    if not _has_hook(repo):
        raise ApiError(403, "push_disabled", "this project accepts no pushes (it has no pre-receive hook to verify "
                                             "them); submit a person's edit with rw submit instead")
    return token


def cgi_env(request: Request, root: Path, slug: str, rest: str, token: str | None,
            backends: dict[str, str] | None = None) -> dict[str, str]:
    """The CGI environment for `git http-backend` (see git-http-backend(1)); `backends`: what the
    hook that lands a person's push needs to reach PostgreSQL, object storage and the git host."""
    env = {
        **(backends or {}),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "GIT_PROJECT_ROOT": str(root),
        "GIT_HTTP_EXPORT_ALL": "1",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,  # the server's own git settings stay out of the protocol
        "GATEWAY_INTERFACE": "CGI/1.1",
        "REQUEST_METHOD": request.method,
        "PATH_INFO": f"/{slug}.git/{rest}",
        "QUERY_STRING": request.url.query,
        "CONTENT_TYPE": request.headers.get("content-type", ""),
        "REMOTE_ADDR": request.client.host if request.client else "",
        "HOME": str(root),
        # Landings staged for a git host's next push (refs/rw/) are not history yet: never served.
        "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "transfer.hideRefs", "GIT_CONFIG_VALUE_0": "refs/rw/",
    }
    for header, name in (("content-length", "CONTENT_LENGTH"), ("content-encoding", "HTTP_CONTENT_ENCODING"),
                         ("git-protocol", "GIT_PROTOCOL")):
        value = request.headers.get(header)
        if value is not None:
            env[name] = value
    if token is not None:
        env.update({"RW_PUSH_TOKEN": token, "REMOTE_USER": str(request.state.actor),
                    "GIT_CONFIG_COUNT": "2", "GIT_CONFIG_KEY_1": "http.receivepack", "GIT_CONFIG_VALUE_1": "true"})
    return env


async def spool_body(request: Request, cap: int) -> IO[bytes]:
    """The request body streamed into a temporary file (memory up to 1 MB), refusing more than `cap`."""
    spool: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=1024 * 1024)  # noqa: SIM115 - closed by caller
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            spool.close()
            raise ApiError(413, "too_large", f"a git request body may be at most {cap} bytes")
        spool.write(chunk)
    spool.seek(0)
    return spool


def parse_cgi_head(head: bytes) -> tuple[int, dict[str, str]]:
    """Status and headers of a CGI response head."""
    status, headers = 200, {}
    for line in head.decode("latin-1").splitlines():
        name, _, value = line.partition(":")
        name, value = name.strip().lower(), value.strip()
        if name == "status":
            status = int(value.split(" ", 1)[0])
        elif name in _PASSED_HEADERS:
            headers[name] = value
    return status, headers


def _read_head(out: io.BufferedReader) -> tuple[bytes, bytes]:
    """(CGI head, the body bytes already read after it)."""
    buffered = b""
    while True:
        for separator in (b"\r\n\r\n", b"\n\n"):
            head, found, rest = buffered.partition(separator)
            if found:
                return head, rest
        chunk = out.read1(CHUNK)
        if not chunk or len(buffered) > CHUNK:
            raise ApiError(502, "git_failed", "git http-backend gave no response head")
        buffered += chunk


def _finish(proc: subprocess.Popen[bytes], spool: IO[bytes], errors: IO[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()
    spool.close()
    errors.seek(0)
    said = errors.read(2000)
    errors.close()
    if said.strip():
        log.info("git http-backend: %s", said.decode("utf-8", "replace").strip()[:500])


async def _body(proc: subprocess.Popen[bytes], first: bytes, spool: IO[bytes],
                errors: IO[bytes]) -> AsyncIterator[bytes]:
    """git's output after the head, read in a worker thread so the event loop never blocks."""
    out = cast(io.BufferedReader, proc.stdout)
    try:
        if first:
            yield first
        while chunk := await run_in_threadpool(out.read1, CHUNK):
            yield chunk
    finally:
        await run_in_threadpool(_finish, proc, spool, errors)


class GitResponse(Response):
    """git's answer streamed as it comes. Not StreamingResponse: that one also waits on `receive`
    for a disconnect, and some servers answer `receive` with a disconnect as soon as the request
    body is complete, which cut git's answer short."""

    def __init__(self, chunks: AsyncIterator[bytes], status_code: int, headers: dict[str, str]) -> None:
        super().__init__(None, status_code, headers)
        # The length is unknown until git is done: the body goes chunked, never as "length 0".
        self.raw_headers = [(name, value) for name, value in self.raw_headers if name != b"content-length"]
        self.chunks = chunks

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        head_only = scope.get("method") == "HEAD"
        async for chunk in self.chunks:
            if not head_only:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def git_http(request: Request) -> Response:
    """`GET/POST /projects/{slug}.git/{rest}`: one smart-HTTP request, run by git http-backend."""
    svc: Service = request.app.state.service
    slug, rest = request.path_params["slug"], request.path_params["rest"]
    if not SLUG_RE.match(slug):
        raise NotFound(f"there is no project {slug[:70]!r}", code="no_project")
    service = service_of(rest, request.url.query)
    if (request.method == "POST") != (rest != "info/refs"):
        raise ApiError(405, "method_not_allowed", "info/refs is read with GET; the services are POSTed to")
    repo = (await run_in_threadpool(svc.project, slug)).path
    token = await _authorize_push(request, svc, repo) if service == RECEIVE else None
    cap = MAX_RECEIVE_REQUEST if service == RECEIVE else MAX_UPLOAD_REQUEST
    # A body that trickles in must not hold a request open forever; a pushed pack may be large.
    allowed_s = svc.config.body_timeout_s * (RECEIVE_TIME_FACTOR if service == RECEIVE else 1)
    try:
        async with asyncio.timeout(allowed_s):
            spool = await spool_body(request, cap)
    except TimeoutError as exc:
        raise ApiError(408, "body_timeout", f"the request body did not arrive within {allowed_s:g} s") from exc
    # stderr goes to a file, not a pipe: a chatty git must never block on a pipe nobody reads.
    errors = tempfile.TemporaryFile()  # noqa: SIM115 - closed by _finish
    try:
        proc = subprocess.Popen([_backend()], stdin=spool, stdout=subprocess.PIPE, stderr=errors,
                                env=cgi_env(request, repo.parent, slug, rest, token,
                                            backend_environment(svc.home.settings.backends)), cwd=str(repo))
    except OSError as exc:
        spool.close()
        errors.close()
        raise ApiError(503, "git_unavailable", f"git http-backend could not start: {exc}") from exc
    try:
        head, first = await run_in_threadpool(_read_head, cast(io.BufferedReader, proc.stdout))
    except BaseException:
        await run_in_threadpool(_finish, proc, spool, errors)
        raise
    status, headers = parse_cgi_head(head)
    return GitResponse(_body(proc, first, spool, errors), status_code=status,
                       headers={**headers, "cache-control": "no-cache", **{
                           k: v for k, v in SECURITY_HEADERS.items() if k != "cache-control"}})
