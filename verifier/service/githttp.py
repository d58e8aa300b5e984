"""Git's smart HTTP protocol for each project (`git clone http://HOST/projects/SLUG.git`), spoken by
git itself: every request is handed to `git http-backend` as a CGI subprocess, bodies streamed both
ways. Nothing here speaks the git protocol: it decides who may run which service, holds request
bodies to their limits, and reads the wants of a fetch (below).

- Reading (`git-upload-pack`: clone, fetch) is open, like every other read of a project.
- Writing (`git-receive-pack`: push) is a person's. With `Authorization: Bearer` (what `rw git
  setup` stores in a clone's `http.extraHeader`) the token is checked here: unknown, revoked or
  expired is 401, an agent's token or one without the `steward` scope for this project 403. The
  token is handed to git as `RW_PUSH_TOKEN` so the repository's pre-receive hook authenticates the
  pusher again and runs the verifier on what is pushed. Without the header the push reaches the
  hook too, which then reads the person's token from the push option (`git push -o token=...`,
  the README's form on every transport) and refuses a push that has none, saying how; the hook is
  the gate either way. A repository without a pre-receive hook refuses every push (fail closed:
  without the hook, a push would move the branch past the verifier).
- A refusal on this endpoint answers a git client (User-Agent `git/...`) in text/plain, which git
  prints as `remote:` lines, so a person or agent sees the reason and not only a status.
- Only the smart protocol's three paths exist; the dumb protocol's file paths are 404.
- Request bodies are held to the API's clocks, per direction: a pause longer than the service's
  body idle timeout, or a body slower than its body timeout, is 408 `body_timeout`; a body over
  its cap is 413 `too_large` (at once when Content-Length says so): at most MAX_UPLOAD_REQUEST for
  upload-pack (a fetch's negotiation), MAX_RECEIVE_REQUEST for receive-pack (a push's pack, the
  API's largest body: a trace bundle and its patch).
- Only objects reachable from the advertised refs are served. git itself does not hold to that
  (protocol v2's `fetch` serves any object named in a `want`, and v0 over HTTP any blob), so the
  wants of every upload-pack request are read here (`wanted_ids`, the one piece of the protocol
  this module reads: pkt-lines that start with `want `), and a request wanting anything but a
  commit reachable from a ref that is not hidden is refused, 403 `unadvertised_object`. Refs
  under refs/rw/ (landings staged for a git host) are hidden from ref listings and from fetches
  by id alike; uploadpack.allow*SHA1InWant are set off besides.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import subprocess
import tempfile
import zlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import IO, cast

import pygit2
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.types import Receive, Scope, Send

from verifier.constants import MAX_RECEIVE_REQUEST, MAX_UPLOAD_REQUEST
from verifier.errors import AuthError, NotFound, VerifierError
from verifier.formats.base import SLUG_RE
from verifier.service.auth import bearer_token
from verifier.service.core import Service, clock
from verifier.service.errors import SECURITY_HEADERS, ApiError, error_response
from verifier.service.limits import chunks, declared_length, too_large
from verifier.store.audit import record_denial
from verifier.store.backends import backend_environment
from verifier.store.identities import require

log = logging.getLogger("rw.service")
UPLOAD, RECEIVE = "git-upload-pack", "git-receive-pack"
SMART_PATHS = frozenset({"info/refs", UPLOAD, RECEIVE})
HIDDEN_REFS = "refs/rw/"  # landings staged for a git host's next push: not history yet
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


async def _authorize_push(request: Request, svc: Service, repo: Path, slug: str) -> str | None:
    """The pusher's token, if they sent one and may push (a person's token, scoped for pushing to
    this project); None when they sent none (the hook reads `-o token=`). A repository without its
    hook refuses every push."""
    token: str | None = None
    if request.headers.get("authorization") is not None:
        token = bearer_token(request.headers.get("authorization"))
        try:
            actor = await run_in_threadpool(svc.authenticate, token)
        except AuthError as exc:
            await run_in_threadpool(record_denial, svc.home, kind="authentication", who="unknown", action="git push",
                                    project=slug, why=f"[{exc.code}] {exc}", at=clock(), door="git")
            raise
        request.state.actor = actor.handle
        if actor.type != "human":
            raise ApiError(403, "push_forbidden", "agents do not push: claim a leaf and submit a patch with its "
                                                  "trace (rw submit); only people push, and their pushes are "
                                                  "verified too")
        try:
            require(actor, "steward", slug)
        except AuthError as exc:
            await run_in_threadpool(record_denial, svc.home, kind="authentication", who=actor.handle,
                                    action="git push", project=slug, why=f"[{exc.code}] {exc}", at=clock(), door="git")
            raise
    if not _has_hook(repo):
        raise ApiError(403, "push_disabled", "this project accepts no pushes (it has no pre-receive hook to verify "
                                             "them); submit a person's edit with rw submit instead")
    return token


def for_git(request: Request, exc: VerifierError) -> Response | None:
    """A refusal as git shows it (text/plain: `remote: [code] message`), for a git client; None for others."""
    if not request.headers.get("user-agent", "").startswith("git/"):
        return None
    answer = error_response(exc)
    code = json.loads(bytes(answer.body))["error"]
    text = f"[{code['code']}] {code['message']}\n"
    headers = {k: v for k, v in answer.headers.items() if k not in ("content-type", "content-length")}
    return PlainTextResponse(text, status_code=answer.status_code, headers=headers)


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
        "RW_PUSH_TRANSPORT": "http",  # the hook's refusals then suggest the form for HTTP
    }
    # Hidden refs are never listed; objects are served only when wanted from what is listed
    # (checked in `check_wants` too: git's own switches do not bind protocol v2).
    config = [("transfer.hideRefs", HIDDEN_REFS), ("uploadpack.allowTipSHA1InWant", "false"),
              ("uploadpack.allowReachableSHA1InWant", "false"), ("uploadpack.allowAnySHA1InWant", "false"),
              ("uploadpack.allowFilter", "false"), ("uploadpack.allowRefInWant", "false")]
    for header, name in (("content-length", "CONTENT_LENGTH"), ("content-encoding", "HTTP_CONTENT_ENCODING"),
                         ("git-protocol", "GIT_PROTOCOL")):
        value = request.headers.get(header)
        if value is not None:
            env[name] = value
    if token is not None:
        env.update({"RW_PUSH_TOKEN": token, "REMOTE_USER": str(request.state.actor)})
    if service_of(rest, request.url.query) == RECEIVE:  # _authorize_push decided who reaches the hook
        config.append(("http.receivepack", "true"))
    env["GIT_CONFIG_COUNT"] = str(len(config))
    for number, (key, value) in enumerate(config):
        env[f"GIT_CONFIG_KEY_{number}"], env[f"GIT_CONFIG_VALUE_{number}"] = key, value
    return env


async def spool_body(request: Request, cap: int, *, idle_s: float, total_s: float, what: str) -> IO[bytes]:
    """The request body streamed into a temporary file (memory up to 1 MB) under the API's limits:
    413 past `cap` bytes, 408 on a pause over `idle_s` or a body slower than `total_s`."""
    declared = declared_length(request.headers)
    if declared is not None and declared > cap:
        raise too_large(cap, what)
    spool: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=1024 * 1024)  # noqa: SIM115 - closed by caller
    try:
        async for chunk in chunks(request.stream(), cap=cap, what=what, idle_s=idle_s, total_s=total_s):
            spool.write(chunk)
    except BaseException:
        spool.close()
        raise
    spool.seek(0)
    return spool


def wanted_ids(body: bytes, encoding: str | None, cap: int = MAX_UPLOAD_REQUEST) -> list[str]:
    """The object ids an upload-pack request wants (`want <id>` pkt-lines, protocol v0 and v2),
    read up to the end or the first malformed packet (where git stops reading too)."""
    if encoding == "gzip":
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            body = inflater.decompress(body, cap + 1)
        except zlib.error as exc:
            raise ApiError(400, "invalid_body", "the gzip-encoded git request does not inflate") from exc
        if len(body) > cap:
            raise too_large(cap, "the inflated git request")
    wants, at = [], 0
    while at + 4 <= len(body):
        try:
            size = int(body[at:at + 4], 16)
        except ValueError:
            break
        if size < 4:  # flush, delimiter and response-end packets carry nothing
            at += 4
            continue
        line = body[at + 4:at + size]
        at += size
        if line.startswith(b"want "):
            wants.append(line[5:].split(b" ", 1)[0].strip().decode("ascii", "replace"))
    return wants


def check_wants(repo_path: Path, wants: list[str]) -> None:
    """Refuse (403 unadvertised_object) any want that is not a commit reachable from a ref that is
    listed (every ref but the hidden ones) or such a ref's own object."""
    if not wants:
        return
    repo = pygit2.Repository(str(repo_path))
    tips: dict[str, pygit2.Oid] = {}
    for name in repo.references:
        if name.startswith(HIDDEN_REFS):
            continue
        with contextlib.suppress(pygit2.GitError, KeyError, ValueError):
            ref = repo.references[name].resolve()
            tips[str(ref.target)] = ref.peel(pygit2.Commit).id
    for want in wants:
        if want in tips:
            continue
        try:
            obj = repo.get(want)
        except (ValueError, pygit2.GitError):
            obj = None
        if isinstance(obj, pygit2.Commit) and any(
                obj.id == tip or repo.descendant_of(tip, obj.id) for tip in tips.values()):
            continue
        raise ApiError(403, "unadvertised_object", f"{want[:64]} is not reachable from the refs this project "
                                                   "lists; only they and their history are served")


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
    try:
        return await _git_http(request)
    except VerifierError as exc:
        answer = for_git(request, exc)
        if answer is None:
            raise
        return answer


async def _git_http(request: Request) -> Response:
    svc: Service = request.app.state.service
    slug, rest = request.path_params["slug"], request.path_params["rest"]
    if not SLUG_RE.match(slug):
        raise NotFound(f"there is no project {slug[:70]!r}", code="no_project")
    service = service_of(rest, request.url.query)
    if (request.method == "POST") != (rest != "info/refs"):
        raise ApiError(405, "method_not_allowed", "info/refs is read with GET; the services are POSTed to")
    repo = (await run_in_threadpool(svc.project, slug)).path
    token = await _authorize_push(request, svc, repo, slug) if service == RECEIVE else None
    cap = MAX_RECEIVE_REQUEST if service == RECEIVE else MAX_UPLOAD_REQUEST
    # A body that trickles in or stalls must not hold a request (and a git process) open.
    spool = await spool_body(request, cap, idle_s=svc.config.body_idle_timeout_s,
                             total_s=svc.config.body_timeout_s, what=f"a {service} request body")
    if service == UPLOAD and rest == UPLOAD:
        try:
            wants = wanted_ids(spool.read(), request.headers.get("content-encoding"))
            spool.seek(0)
            await run_in_threadpool(check_wants, repo, wants)
        except BaseException:
            spool.close()
            raise
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
