"""The endpoints of tokens and invites: list, revoke and rotate a token; make an invite; redeem
one (`rw join`). docs/api.md "Tokens and invites" describes them.

Who may do what is the registry's plain rules (verifier.store.identities): a token is managed by
its own actor, by the person who operates it, or by an admin (`may_manage`); any other caller is
answered 403 `not_your_token`, and what is not theirs is not listed. An invite is made by the
project's steward (PROJECT.md `steward`) or an admin. Redeeming one needs no token: the code is the
credential, good once and until it expires.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from pydantic import BaseModel, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from verifier.service.core import Service, clock, invalid_body
from verifier.service.errors import ApiError
from verifier.service.limits import read_json
from verifier.service.routes import actor_of, path, reply, service
from verifier.service.token_schemas import InviteRequest, JoinRequest, RevokeRequest, RotateRequest
from verifier.store.identities import Actor, may_manage
from verifier.writes.authority import authority_of, enforce


async def _body(request: Request, model: type[BaseModel]) -> Any:
    svc = service(request)
    raw = await read_json(request.stream(), request.headers, cap=svc.config.max_json_bytes,
                          idle_s=svc.config.body_idle_timeout_s, total_s=svc.config.body_timeout_s)
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise invalid_body(exc) from exc


def _owned(svc: Service, actor: Actor, handle: str) -> None:
    """403 `not_your_token` unless `actor` may manage `handle`'s token."""
    owner = svc.home.identities.get(handle)
    if owner is None or not may_manage(actor, owner):
        # Unknown and not-yours are one answer: a caller learns nothing of handles that are not theirs.
        raise ApiError(403, "not_your_token", f"the token of {handle[:63]} is not yours to manage: a person "
                                              "manages their own and their agents' tokens, the admin any")


def _invite(svc: Service, actor: Actor, slug: str, body: InviteRequest) -> dict[str, Any]:
    now = clock()
    svc.project(slug)  # 404 `no_project` first
    enforce(svc.home, authority_of(svc.home, slug), actor, "invite", now=now, door="http", project=slug)
    expires = timedelta(seconds=body.expires_s) if body.expires_s else None
    invite_id, code = svc.home.identities.invite(slug, body.operator, body.agents, now, actor.handle, expires)
    return {"invite_id": invite_id, "code": code, "project": slug, "operator": body.operator,
            "agents": body.agents}


async def list_tokens(request: Request) -> Response:
    actor, _token = await actor_of(request, "read")
    infos = await run_in_threadpool(service(request).home.identities.tokens, clock())
    return reply({"tokens": [info.to_json() for info in infos if may_manage(actor, info)]})


async def revoke_token(request: Request) -> Response:
    handle = path(request, "handle")
    # Revoking your own token needs no more than the token: a leaked one must be easy to kill.
    actor, _token = await _manager(request, handle)
    body: RevokeRequest = await _body(request, RevokeRequest)
    svc = service(request)
    await run_in_threadpool(_owned, svc, actor, handle)
    info = await run_in_threadpool(svc.home.identities.revoke, handle, clock(),
                                   body.reason or f"revoked by {actor.handle}")
    return reply({"token": info.to_json()})


async def rotate_token(request: Request) -> Response:
    handle = path(request, "handle")
    actor, _token = await _manager(request, handle)
    body: RotateRequest = await _body(request, RotateRequest)
    svc = service(request)
    await run_in_threadpool(_owned, svc, actor, handle)
    lifetime = timedelta(seconds=body.expires_s) if body.expires_s else None
    token = await run_in_threadpool(svc.home.identities.rotate, handle, clock(), lifetime)
    info = next(i for i in await run_in_threadpool(svc.home.identities.tokens, clock()) if i.handle == handle)
    return reply({"handle": handle, "token": token, "expires_at": info.expires_at})


async def _manager(request: Request, handle: str) -> tuple[Actor, str]:
    """The caller of a revoke or rotate: their own token needs `read`, another's `steward`."""
    actor, token = await actor_of(request, "read")
    if handle != actor.handle:
        actor, token = await actor_of(request, "steward")
    return actor, token


async def make_invite(request: Request) -> Response:
    actor, _token = await actor_of(request, "steward")
    body: InviteRequest = await _body(request, InviteRequest)
    return reply(await run_in_threadpool(_invite, service(request), actor, path(request, "slug"), body), 201)


async def join(request: Request) -> Response:
    body: JoinRequest = await _body(request, JoinRequest)
    joined = await run_in_threadpool(service(request).home.identities.join, body.code, list(body.agents), clock())
    request.state.actor = joined.operator
    return reply({"project": joined.project, "operator": joined.operator, "person_token": joined.person_token,
                  "agents": joined.agents, "expires_at": joined.expires_at}, 201)


TOKEN_ROUTES = [
    Route("/tokens", list_tokens, methods=["GET"]),
    Route("/tokens/{handle}/revoke", revoke_token, methods=["POST"]),
    Route("/tokens/{handle}/rotate", rotate_token, methods=["POST"]),
    Route("/projects/{slug}/invites", make_invite, methods=["POST"]),
    Route("/join", join, methods=["POST"]),
]
