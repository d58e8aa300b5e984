"""The endpoints a person steers a project by from anywhere (docs/api.md, "People"): a person's
edit, the hold queue and its decisions, reverts, verdicts, a person's leaf, repair, seal, the Planner's wake,
and the reads (scores, the ledger's check, the evaluation, the audit log).

Parse, call `verifier.service.people` in a worker thread, answer JSON. Every action needs
`Authorization: Bearer` of a person; who may do which is the one authority rule's answer
(docs/authority.md), asked by the write itself under the project's lock: a refusal is 403
`not_authorised`, naming the role it needs and who holds it, and is kept in the audit log. After a
landing the Commons is told, as after a submission.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import TypeVar

from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from verifier.service import people
from verifier.service.core import IDEMPOTENCY_KEY_RE, Answer, Service, clock, invalid_body
from verifier.service.errors import ApiError
from verifier.service.limits import read_bundle_form, read_json
from verifier.service.people_schemas import (
    REVISION_PATTERN,
    EmptyBody,
    LeafBody,
    ReasonBody,
    RepairBody,
    RevertBody,
    VerdictBody,
    WakeBody,
)
from verifier.service.routes import actor_of, answer, int_param, path, reply, service
from verifier.store.identities import Actor
from verifier.writes.project import LeafRequest

log = logging.getLogger("rw.service")
_REVISION = re.compile(REVISION_PATTERN)  # matched whole: a trailing newline is not a commit id
Json = people.Json
_Body = TypeVar("_Body", EmptyBody, LeafBody, ReasonBody, RepairBody, RevertBody, VerdictBody, WakeBody)


async def _body(request: Request, model: type[_Body]) -> _Body:
    """The JSON body through the service's one reader, then the strict model."""
    svc = service(request)
    raw = await read_json(request.stream(), request.headers, cap=svc.config.max_json_bytes,
                          idle_s=svc.config.body_idle_timeout_s, total_s=svc.config.body_timeout_s)
    try:
        return model.model_validate(raw)  # Strict: '1' is not 1, unknown fields are errors
    except ValidationError as exc:
        raise invalid_body(exc) from exc


def _told(svc: Service, slug: str) -> None:
    """Tell the Commons what landed; a failure here never costs the caller its answer."""
    try:
        svc.notifier.landed(slug, clock)
    except Exception:  # logged; the next catch-up posts what this one could not
        log.exception("telling Commons about a person's landing in %s failed", slug)


async def _act(request: Request, action: Callable[[Service, Actor, str], Json], status: int = 200) -> Response:
    """Authenticate, run the person's action in a worker thread, tell the Commons, answer."""
    actor, _token = await actor_of(request)
    svc = service(request)
    slug = path(request, "slug")
    svc.project(slug)  # 404 `no_project` before anything else

    def run() -> Json:
        answer = action(svc, actor, slug)
        _told(svc, slug)
        return answer

    return reply(dict(await run_in_threadpool(run)), status)


async def edits(request: Request) -> Response:
    """A person's edit, as `rw submit SLUG --patch` sends it: the patch (and, optionally, a trace
    bundle's files) in the multipart form a submission uses, `?base=REV` the revision it was made
    against (default: the tip). Answered with its verdict, as a submission is."""
    base = request.query_params.get("base")
    if base is not None and not _REVISION.fullmatch(base):
        raise ApiError(400, "bad_query", "base must be a commit id: 4-40 lowercase hex digits")
    key = request.headers.get("idempotency-key")
    if key is not None and not IDEMPOTENCY_KEY_RE.match(key):
        raise ApiError(400, "bad_idempotency_key", "Idempotency-Key must be 8-128 of A-Z a-z 0-9 _ . : -")
    actor, token = await actor_of(request)
    svc, slug = service(request), path(request, "slug")
    await run_in_threadpool(svc.project, slug)  # 404 before reading a large body
    files, patch = await read_bundle_form(request.stream(), request.headers, idle_s=svc.config.body_idle_timeout_s,
                                          total_s=svc.config.body_timeout_s)
    sent = patch if patch is not None else files.get("patch.diff")
    if not sent:
        raise ApiError(400, "bad_form", "the form has no patch: send it as the part `patch`")

    def run() -> Answer:
        answered = svc.edit(actor, token, slug, files, sent, base=base, key=key)
        _told(svc, slug)
        return answered

    return answer(await run_in_threadpool(run))


async def holds(request: Request) -> Response:
    svc, slug = service(request), path(request, "slug")
    svc.project(slug)
    return reply({"project": slug, "held": await run_in_threadpool(people.held, svc.home, slug)})


async def _hold_decision(request: Request, approve_it: bool) -> Response:
    body = await _body(request, ReasonBody)
    object_id = path(request, "object_id")
    return await _act(request, lambda svc, actor, slug: people.decide_hold(
        svc.home, actor, slug, object_id, approve_it=approve_it, reason=body.reason, now=clock(), door="http"))


async def hold_approve(request: Request) -> Response:
    return await _hold_decision(request, True)


async def hold_reject(request: Request) -> Response:
    return await _hold_decision(request, False)


async def reverts(request: Request) -> Response:
    body = await _body(request, RevertBody)
    return await _act(request, lambda svc, actor, slug: people.revert_commit(
        svc.home, actor, slug, body.commit, reason=body.reason, now=clock(), door="http"), 201)


async def verdicts(request: Request) -> Response:
    svc, slug = service(request), path(request, "slug")
    svc.project(slug)
    return reply({"project": slug, "proposals": await run_in_threadpool(people.verdict_proposals, svc.home, slug)})


async def verdict_set(request: Request) -> Response:
    body = await _body(request, VerdictBody)
    hypothesis_id = path(request, "hypothesis_id")
    return await _act(request, lambda svc, actor, slug: people.set_hypothesis_verdict(
        svc.home, actor, slug, hypothesis_id, body.verdict, confidence=body.confidence, reason=body.reason,
        now=clock(), door="http"))


async def verdict_approve(request: Request) -> Response:
    body = await _body(request, ReasonBody)
    hypothesis_id = path(request, "hypothesis_id")
    return await _act(request, lambda svc, actor, slug: people.approve_verdict(
        svc.home, actor, slug, hypothesis_id, reason=body.reason, now=clock(), door="http"))


async def leaf_add(request: Request) -> Response:
    body = await _body(request, LeafBody)
    leaf = LeafRequest(kind=body.kind, leaf_id=body.leaf_id, source_id=body.source_id,
                       hypothesis_id=body.hypothesis_id, revision=body.revision, gap=body.gap,
                       object_path=body.object_path, finding_ids=tuple(body.finding_ids), base=body.base,
                       expires_in=body.expires_in, title=body.title)
    return await _act(request, lambda svc, actor, slug: people.add_person_leaf(
        svc.home, actor, slug, leaf, now=clock(), door="http"), 201)


async def repair(request: Request) -> Response:
    body = await _body(request, RepairBody)
    return await _act(request, lambda svc, actor, slug: people.repair_project(
        svc.home, actor, slug, body.to, reason=body.reason, now=clock(), door="http"))


async def seal(request: Request) -> Response:
    await _body(request, EmptyBody)
    return await _act(request, lambda svc, actor, slug: people.seal(svc.home, actor, slug, now=clock(), door="http"))


async def planner_wake(request: Request) -> Response:
    body = await _body(request, WakeBody)
    return await _act(request, lambda svc, actor, slug: people.wake_planner(
        svc.home, actor, slug, now=clock(), force=body.force, warm_only=body.warm_only, door="http"))


async def scores(request: Request) -> Response:
    svc, slug = service(request), path(request, "slug")
    svc.project(slug)
    return reply({"project": slug, "scores": await run_in_threadpool(people.scores, svc.home, slug)})


async def ledger_verify(request: Request) -> Response:
    svc, slug = service(request), path(request, "slug")
    svc.project(slug)
    return reply(await run_in_threadpool(people.ledger_check, svc.home, slug))


async def evaluation(request: Request) -> Response:
    svc, slug = service(request), path(request, "slug")
    svc.project(slug)
    return reply({"project": slug, "eval": await run_in_threadpool(
        lambda: people.evaluation(svc.home, slug, now=clock()))})


async def audit(request: Request) -> Response:
    actor, _token = await actor_of(request)
    svc, slug = service(request), path(request, "slug")
    svc.project(slug)
    return reply(await run_in_threadpool(lambda: people.audit(svc.home, actor, slug, now=clock(), door="http")))


async def traces(request: Request) -> Response:
    actor, _token = await actor_of(request)
    svc, slug = service(request), path(request, "slug")
    limit = int_param(request, "limit", 50, 1, 500)
    kind, outcome = request.query_params.get("kind"), request.query_params.get("outcome")
    return reply(await run_in_threadpool(lambda: people.traces(svc.home, actor, slug, now=clock(), kind=kind,
                                                               outcome=outcome, limit=limit)))


async def trace(request: Request) -> Response:
    actor, _token = await actor_of(request)
    svc, slug, trace_id = service(request), path(request, "slug"), path(request, "trace_id")
    return reply(await run_in_threadpool(lambda: people.trace(svc.home, actor, slug, trace_id, now=clock())))


PEOPLE_ROUTES = [
    Route("/projects/{slug}/edits", edits, methods=["POST"]),
    Route("/projects/{slug}/holds", holds, methods=["GET"]),
    Route("/projects/{slug}/holds/{object_id}/approve", hold_approve, methods=["POST"]),
    Route("/projects/{slug}/holds/{object_id}/reject", hold_reject, methods=["POST"]),
    Route("/projects/{slug}/reverts", reverts, methods=["POST"]),
    Route("/projects/{slug}/verdicts", verdicts, methods=["GET"]),
    Route("/projects/{slug}/verdicts/{hypothesis_id}", verdict_set, methods=["POST"]),
    Route("/projects/{slug}/verdicts/{hypothesis_id}/approve", verdict_approve, methods=["POST"]),
    Route("/projects/{slug}/leaves", leaf_add, methods=["POST"]),
    Route("/projects/{slug}/repair", repair, methods=["POST"]),
    Route("/projects/{slug}/seal", seal, methods=["POST"]),
    Route("/projects/{slug}/planner/wake", planner_wake, methods=["POST"]),
    Route("/projects/{slug}/scores", scores, methods=["GET"]),
    Route("/projects/{slug}/ledger/verify", ledger_verify, methods=["GET"]),
    Route("/projects/{slug}/eval", evaluation, methods=["GET"]),
    Route("/projects/{slug}/audit", audit, methods=["GET"]),
    Route("/projects/{slug}/traces", traces, methods=["GET"]),
    Route("/projects/{slug}/traces/{trace_id}", trace, methods=["GET"]),
]
