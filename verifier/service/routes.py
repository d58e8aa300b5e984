"""The endpoints: parse the request, call `core.Service` in a worker thread, answer JSON.

Reading is open (design §9.3: projects, the task board, the ledger, the digest, a leaf's thread);
everything that acts, and an agent's own inbox and submissions, needs `Authorization: Bearer`.
docs/api.md describes each endpoint; docs/openapi.json is the same, for machines.
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from verifier import VERSION
from verifier.errors import AuthError
from verifier.service.auth import bearer_token
from verifier.service.core import IDEMPOTENCY_KEY_RE, Answer, Service, clock
from verifier.service.errors import SECURITY_HEADERS, ApiError
from verifier.service.limits import read_bundle_form, read_json
from verifier.service.openapi import openapi_document
from verifier.service.ui_routes import UI_ROUTES
from verifier.store.audit import record_denial
from verifier.store.identities import Actor, Scope, require

BOARD_STATES = ("open", "claimed", "expired", "accepted", "held", "rejected", "reverted", "all")


def service(request: Request) -> Service:
    svc: Service = request.app.state.service
    return svc


def reply(body: dict[str, Any], status: int = 200, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(body, status_code=status, headers={**SECURITY_HEADERS, **(headers or {})})


def answer(result: Answer) -> JSONResponse:
    return reply(result.body, result.status, result.headers)


def int_param(request: Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise ApiError(400, "bad_query", f"{name} must be an integer") from exc
    if not low <= value <= high:
        raise ApiError(400, "bad_query", f"{name} must be between {low} and {high}")
    return value


async def actor_of(request: Request, kind: Scope | None = None) -> tuple[Actor, str]:
    """The caller and their token, if the token may take `kind` of action in the project the path
    names (verifier.store.identities.require). Unnamed, `kind` is `read` for a GET and `steward`
    otherwise: a new endpoint that acts needs a person's scope unless it says it is leaf work. A
    refusal (401, or 403 `token_scope`) is kept in the home's audit log (verifier.store.audit: who,
    what, which project, why, when; never the token)."""
    svc = service(request)
    who = "unknown"
    slug = request.path_params.get("slug")
    try:
        token = bearer_token(request.headers.get("authorization"))
        actor = await run_in_threadpool(svc.authenticate, token)
        who = request.state.actor = actor.handle  # for the access log, which never sees the token
        wanted: Scope = kind or ("read" if request.method in ("GET", "HEAD") else "steward")
        require(actor, wanted, slug)
    except (ApiError, AuthError) as exc:
        await run_in_threadpool(record_denial, svc.home, kind="authentication", who=who,
                                action=f"{request.method} {request.url.path}",
                                project=slug if isinstance(slug, str) else None, why=f"[{exc.code}] {exc}",
                                at=clock(), door="http")
        raise
    return actor, token


def path(request: Request, name: str) -> str:
    value: str = request.path_params[name]
    return value


async def health(request: Request) -> Response:
    return reply({"ok": True, "version": VERSION})


async def openapi(request: Request) -> Response:
    return reply(openapi_document())


async def projects(request: Request) -> Response:
    return reply(await run_in_threadpool(service(request).projects))


async def project(request: Request) -> Response:
    return reply(await run_in_threadpool(service(request).project_summary, path(request, "slug")))


async def leaves(request: Request) -> Response:
    state = request.query_params.get("state", "open")
    if state not in BOARD_STATES:
        raise ApiError(400, "bad_query", f"state must be one of {', '.join(BOARD_STATES)}")
    # Reading is open; an agent that sends its token is not offered reviews of its own objects.
    viewer = (await actor_of(request))[0] if request.headers.get("authorization") else None
    return reply(await run_in_threadpool(service(request).leaves, path(request, "slug"), state, viewer))


async def leaf(request: Request) -> Response:
    return reply(await run_in_threadpool(service(request).leaf, path(request, "slug"), path(request, "leaf_id")))


async def claim(request: Request) -> Response:
    actor, _token = await actor_of(request, "leaf")
    svc = service(request)
    body = await read_json(request.stream(), request.headers, cap=svc.config.max_json_bytes,
                           idle_s=svc.config.body_idle_timeout_s, total_s=svc.config.body_timeout_s)
    return answer(await run_in_threadpool(svc.claim, actor, path(request, "slug"), path(request, "leaf_id"), body))


async def release(request: Request) -> Response:
    actor, _token = await actor_of(request, "leaf")
    return answer(await run_in_threadpool(service(request).release, actor, path(request, "slug"),
                                          path(request, "leaf_id")))


async def submissions(request: Request) -> Response:
    actor, token = await actor_of(request, "leaf")
    svc = service(request)
    slug, leaf_id = path(request, "slug"), path(request, "leaf_id")
    await run_in_threadpool(svc.project, slug)  # 404 before reading a large body
    svc.check_leaf_id(leaf_id)
    key = request.headers.get("idempotency-key")
    if key is not None and not IDEMPOTENCY_KEY_RE.match(key):
        raise ApiError(400, "bad_idempotency_key", "Idempotency-Key must be 8-128 of A-Z a-z 0-9 _ . : -")
    files, patch = await read_bundle_form(request.stream(), request.headers, idle_s=svc.config.body_idle_timeout_s,
                                          total_s=svc.config.body_timeout_s)
    return answer(await run_in_threadpool(svc.submit, actor, token, slug, leaf_id, files, patch, key))


async def outcome(request: Request) -> Response:
    actor, _token = await actor_of(request)
    return reply(await run_in_threadpool(service(request).outcome, actor, path(request, "submission_id")))


async def thread(request: Request) -> Response:
    after = int_param(request, "after", 0, 0, 2**62)
    limit = int_param(request, "limit", 100, 1, 1000)
    return reply(await run_in_threadpool(service(request).thread, path(request, "slug"), path(request, "leaf_id"),
                                         after, limit))


async def post_message(request: Request) -> Response:
    actor, _token = await actor_of(request, "leaf")
    svc = service(request)
    body = await read_json(request.stream(), request.headers, cap=svc.config.max_json_bytes,
                           idle_s=svc.config.body_idle_timeout_s, total_s=svc.config.body_timeout_s)
    return answer(await run_in_threadpool(svc.post, actor, path(request, "slug"), path(request, "leaf_id"), body))


async def inbox(request: Request) -> Response:
    actor, _token = await actor_of(request)
    after = int_param(request, "after", 0, 0, 2**62)
    limit = int_param(request, "limit", 100, 1, 1000)
    return reply(await run_in_threadpool(service(request).inbox, actor, after, limit))


async def ledger(request: Request) -> Response:
    after = int_param(request, "after", -1, -1, 2**62)
    limit = int_param(request, "limit", 100, 1, 1000)
    return reply(await run_in_threadpool(service(request).ledger, path(request, "slug"), after, limit))


async def digest(request: Request) -> Response:
    return reply(dict(await run_in_threadpool(service(request).digest, path(request, "slug"))))


ROUTES = [
    Route("/health", health, methods=["GET"]),
    Route("/openapi.json", openapi, methods=["GET"]),
    Route("/projects", projects, methods=["GET"]),
    Route("/projects/{slug}", project, methods=["GET"]),
    Route("/projects/{slug}/leaves", leaves, methods=["GET"]),
    Route("/projects/{slug}/leaves/{leaf_id}", leaf, methods=["GET"]),
    Route("/projects/{slug}/leaves/{leaf_id}/claim", claim, methods=["POST"]),
    Route("/projects/{slug}/leaves/{leaf_id}/claim", release, methods=["DELETE"]),
    Route("/projects/{slug}/leaves/{leaf_id}/submissions", submissions, methods=["POST"]),
    Route("/projects/{slug}/leaves/{leaf_id}/messages", thread, methods=["GET"]),
    Route("/projects/{slug}/leaves/{leaf_id}/messages", post_message, methods=["POST"]),
    Route("/projects/{slug}/ledger", ledger, methods=["GET"]),
    Route("/projects/{slug}/digest", digest, methods=["GET"]),
    Route("/submissions/{submission_id}", outcome, methods=["GET"]),
    Route("/messages", inbox, methods=["GET"]),
    *UI_ROUTES,
]
