"""The endpoints an agent on another machine needs besides the board: who its token is, a leaf's
payload (the contract, its inputs and the Field Guide), a source's derived text, and the project
itself over git (`verifier.service.githttp`).

A review leaf's payload is `verifier.pipeline.payload.leaf_payload`: the object under review and its
source, never the author's trace id or trace contents.
"""

from __future__ import annotations

import re
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from verifier.errors import FormatError, NotFound
from verifier.formats.source import EXTENSION_BY_MEDIA_TYPE, parse_source
from verifier.pipeline.payload import leaf_payload
from verifier.service.core import Service, clock
from verifier.service.githttp import git_http
from verifier.service.routes import actor_of, path, reply, service
from verifier.state.layout import FIELD_GUIDE, leaf_path, source_bytes_path, source_record_path

SOURCE_ID_RE = re.compile(r"^src_[0-9a-f]{16}$")


def payload_of(svc: Service, slug: str, leaf_id: str) -> dict[str, Any]:
    """What `rw work` writes beside the clone: the payload, the leaf's state, the Field Guide."""
    svc.check_leaf_id(leaf_id)
    repo = svc.project(slug)
    tip = repo.tip()
    if tip is None:
        raise NotFound("the project has no commits yet", code="no_project")
    view = repo.view(tip)
    if view.read(leaf_path(leaf_id)) is None:
        raise NotFound(f"there is no leaf {leaf_id} in {slug}", code="no_leaf")
    try:
        payload = leaf_payload(view, leaf_id)
    except FormatError as exc:
        raise FormatError(f"the leaf contract cannot be read: {exc}", code="leaf_unreadable") from exc
    summary = svc.leaf(slug, leaf_id)
    guide = view.read(FIELD_GUIDE)
    return {"project": slug, "tip": tip, "state": summary["state"], **payload,
            "field_guide": guide.decode("utf-8", "replace") if guide is not None else "", "at": clock().isoformat(),
            # How the service checks a scout's URLs, so `rw check` checks them the same way.
            "fetch": {"mode": svc.runtime.fetch_mode,
                      "private_addresses": svc.home.settings.allow_private_addresses}}


def source_text_of(svc: Service, slug: str, source_id: str) -> dict[str, Any]:
    """The derived text excerpts are matched against (offsets count code points into it)."""
    if not SOURCE_ID_RE.match(source_id):
        raise NotFound(f"{source_id[:70]!r} is not a source id (src_ and 16 hex digits)", code="no_source")
    repo = svc.project(slug)
    tip = repo.tip()
    view = repo.view(tip) if tip is not None else None
    record_data = view.read(source_record_path(source_id)) if view is not None else None
    if view is None or record_data is None:
        raise NotFound(f"there is no source {source_id} in {slug}", code="no_source")
    try:
        record = parse_source(record_data, source_record_path(source_id))
    except FormatError as exc:
        raise FormatError(str(exc), code="source_unreadable") from exc
    where = source_bytes_path(source_id, EXTENSION_BY_MEDIA_TYPE[record.media_type])
    raw, blob = view.read(where), view.blob_id(where)
    if raw is None or blob is None:
        raise NotFound(f"source {source_id} has no retained bytes at {where}", code="no_source")
    try:
        text = svc.home.source_text(blob, raw, record.media_type)
    except ValueError as exc:
        raise FormatError(f"{source_id}: {exc}", code="source_unreadable") from exc
    return {"project": slug, "source_id": source_id, "media_type": record.media_type, "revision": tip,
            "text": text}


async def leaf_payload_route(request: Request) -> Response:
    return reply(await run_in_threadpool(payload_of, service(request), path(request, "slug"),
                                         path(request, "leaf_id")))


async def source_text_route(request: Request) -> Response:
    return reply(await run_in_threadpool(source_text_of, service(request), path(request, "slug"),
                                         path(request, "source_id")))


async def whoami(request: Request) -> Response:
    actor, _token = await actor_of(request)
    return reply({"agent": actor.handle, "operator": actor.operator, "type": actor.type})


AGENT_ROUTES = [
    # Before /projects/{slug}: "SLUG.git/..." must reach git, not the JSON endpoints.
    Route("/projects/{slug}.git/{rest:path}", git_http, methods=["GET", "POST"]),
    Route("/projects/{slug}/leaves/{leaf_id}/payload", leaf_payload_route, methods=["GET"]),
    Route("/projects/{slug}/sources/{source_id}/text", source_text_route, methods=["GET"]),
    Route("/whoami", whoami, methods=["GET"]),
]
