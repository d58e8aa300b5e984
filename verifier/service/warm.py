"""The warm-leaf pool on the service (design §9.1): claim "a warm leaf" without knowing ids.

`POST /projects/{slug}/leaves/warm/claim` (bearer token; body like a claim's: optional `agent`,
`ttl_s`) claims the first open warm leaf of the project, oldest expiry first, and answers with the
claim, the leaf as the board shows it, and its contract. An agent that already holds a live claim
on a warm leaf of the project gets that one again, so a retried request takes no second leaf. A
taken warm leaf leaves the pool, so the Planner then tops the pool up (`wake(..., warm_only=True)`);
a failure there is logged and never costs the agent its claim. 404 `no_warm_leaf` when none is open.

The route is registered ahead of `/projects/{slug}/leaves/{leaf_id}/claim`, whose pattern would
otherwise read `warm` as a leaf id.
"""

from __future__ import annotations

import logging
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from verifier.errors import NotFound, VerifierError
from verifier.roles.planner import wake
from verifier.service.core import Answer, Service, _asserted_body, claim_json, clock
from verifier.service.limits import read_json
from verifier.service.routes import actor_of, answer, path, service
from verifier.service.schemas import ClaimRequest
from verifier.store.identities import Actor
from verifier.ui.board import BoardLeaf, board

log = logging.getLogger("rw.service")


def warm_leaves(svc: Service, slug: str) -> list[BoardLeaf]:
    view = svc._tip_view(svc.project(slug))
    now = clock()
    leaves = board(view, svc.commons.claims(slug, now=now), now)
    return sorted((leaf for leaf in leaves if leaf.contract.warm and leaf.state in ("open", "claimed")),
                  key=lambda leaf: (leaf.contract.expires_at, leaf.contract.leaf_id))


def claim_warm(svc: Service, actor: Actor, slug: str, body: dict[str, Any]) -> Answer:
    _asserted_body(ClaimRequest, body, actor)  # a bad body, or one naming another agent, is refused first
    leaves = warm_leaves(svc, slug)
    mine = next((leaf for leaf in leaves if leaf.claim is not None and leaf.claim.agent == actor.handle), None)
    if mine is not None and mine.claim is not None:
        return _answer(slug, mine, claim_json(mine.claim), 200)
    for leaf in leaves:
        if leaf.state != "open":
            continue
        try:
            claimed = svc.claim(actor, slug, leaf.contract.leaf_id, body)
        except VerifierError as exc:
            if exc.code in ("leaf_claimed", "leaf_closed", "leaf_expired"):
                continue  # another agent got there first: try the next warm leaf
            raise
        _top_up(svc, slug)
        return _answer(slug, leaf, claimed.body, 200)
    raise NotFound(f"{slug} has no open warm leaf right now; try the board (GET /projects/{slug}/leaves) or come "
                   "back after the Planner's next wake", code="no_warm_leaf")


def _answer(slug: str, leaf: BoardLeaf, claim: dict[str, Any], status: int) -> Answer:
    board_json = {**leaf.to_json(), "state": "claimed", "claimed_by": claim["agent"],
                  "claim_expires_at": claim["expires_at"]}
    return Answer(status, {"project": slug, "claim": claim, "leaf": board_json,
                           "contract": leaf.contract.model_dump(mode="json", exclude_none=True)}, {})


def _top_up(svc: Service, slug: str) -> None:
    try:
        wake(svc.home, slug, clock(), commons=svc.commons, warm_only=True)
    except Exception:  # the claim stands; the next wake tops the pool up
        log.exception("topping up the warm-leaf pool of %s failed", slug)


async def claim_warm_route(request: Request) -> Response:
    actor, _token = await actor_of(request, "leaf")
    svc = service(request)
    body = await read_json(request.stream(), request.headers, cap=svc.config.max_json_bytes,
                           idle_s=svc.config.body_idle_timeout_s, total_s=svc.config.body_timeout_s)
    return answer(await run_in_threadpool(claim_warm, svc, actor, path(request, "slug"), body))


WARM_ROUTES = [Route("/projects/{slug}/leaves/warm/claim", claim_warm_route, methods=["POST"])]
