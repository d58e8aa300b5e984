"""`GET /skill`: the live skill, the one text every worker must follow (docs/loop.md, docs/api.md).

Reading is open, like the board: the skill is the workers' manual and holds nothing private. The
answer carries the bytes' `skill_version` (the version a trace manifest must name), the whole text
and each leaf kind's section body, so a worker can take only its kind's section."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from verifier.formats.skill import sections, skill_version
from verifier.roles.liveskill import read_live_skill
from verifier.service.routes import reply, service


def live_skill_body(data: bytes) -> dict[str, object]:
    """The JSON answer for the live skill's bytes."""
    text = data.decode("utf-8")
    return {"skill_version": skill_version(data), "text": text,
            "sections": {kind: section.body for kind, section in sections(text, "live skill").items()}}


async def skill_route(request: Request) -> Response:
    data = await run_in_threadpool(read_live_skill, service(request).home)
    return reply(live_skill_body(data))


SKILL_ROUTES = [Route("/skill", skill_route, methods=["GET"])]
