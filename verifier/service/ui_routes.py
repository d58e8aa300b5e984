"""The UI on the service (`rw serve`): HTML pages under `/`, their JSON at `.json`, and the two
static files. Reading is open, like every read of the service; every UI response carries a
Content-Security-Policy that forbids inline script, besides the service's own headers."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from verifier.errors import FormatError, NotFound
from verifier.service.core import Service, clock
from verifier.service.errors import SECURITY_HEADERS, ApiError
from verifier.ui.render import CSP, static_file
from verifier.ui.site import open_reader, project_page, projects_page

UI_HEADERS = {**SECURITY_HEADERS, "content-security-policy": CSP, "referrer-policy": "no-referrer",
              "x-frame-options": "DENY"}


def _service(request: Request) -> Service:
    svc: Service = request.app.state.service
    return svc


def _respond(found: tuple[bytes, str] | None, what: str) -> Response:
    if found is None:
        raise ApiError(404, "no_page", f"there is no page {what[:120]!r}")
    body, media_type = found
    return Response(body, media_type=media_type, headers=UI_HEADERS)


def _page(svc: Service, slug: str, rest: str) -> tuple[bytes, str] | None:
    repo = svc.project(slug)
    try:
        reader = open_reader(repo, slug, clock(), svc.home.source_text)
    except NotFound as exc:
        raise ApiError(404, "no_project", str(exc)) from exc
    try:
        return project_page(reader, repo, f"p/{slug}/{rest or 'index.html'}")
    except FormatError as exc:
        raise ApiError(409, "unreadable", f"the project cannot be shown: {exc}") from exc


async def home_page(request: Request) -> Response:
    name = request.url.path.lstrip("/") or "index.html"
    return _respond(await run_in_threadpool(projects_page, _service(request).home, clock(), name), name)


async def project(request: Request) -> Response:
    slug, rest = request.path_params["slug"], request.path_params.get("rest", "")
    return _respond(await run_in_threadpool(_page, _service(request), slug, rest), f"p/{slug}/{rest}")


async def project_root(request: Request) -> Response:
    return RedirectResponse(f"/p/{request.path_params['slug']}/index.html", headers=UI_HEADERS)


async def static(request: Request) -> Response:
    name = request.path_params["name"]
    data = static_file(name)
    if data is None:
        raise ApiError(404, "no_page", f"there is no static file {name[:80]!r}")
    media = "text/css; charset=utf-8" if name.endswith(".css") else "text/javascript; charset=utf-8"
    return Response(data, media_type=media, headers=UI_HEADERS)


UI_ROUTES = [
    Route("/", home_page, methods=["GET"]),
    Route("/index.html", home_page, methods=["GET"]),
    Route("/index.json", home_page, methods=["GET"]),
    Route("/static/{name}", static, methods=["GET"]),
    Route("/p/{slug}", project_root, methods=["GET"]),
    Route("/p/{slug}/", project, methods=["GET"]),
    Route("/p/{slug}/{rest:path}", project, methods=["GET"]),
]
