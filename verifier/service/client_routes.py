"""The service's own client, for anyone to install, and the version it runs (docs/api.md "The client").

    GET /version                      which verifier answers, and the one command that installs its client
    GET /client/<wheel>               the wheel itself (`verifier.service.client_package`, built at serve time)
    GET /simple/                      a PEP 503 simple index holding one project...
    GET /simple/researchwiki-verifier/  ...whose page links the wheel with its #sha256= fragment

All open to read, like the board: the client holds nothing secret. `rw work` reads /version and
warns when the service's verifier is newer than the client's.
"""

from __future__ import annotations

from html import escape

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from verifier import VERSION
from verifier.service.client_package import DISTRIBUTION, REQUIRES_PYTHON, WHEEL_NAME, Wheel, served_wheel
from verifier.service.errors import SECURITY_HEADERS, ApiError
from verifier.service.routes import reply
from verifier.version import verifier_version

CLIENT_PATH = f"/client/{WHEEL_NAME}"
INDEX_PATH = f"/simple/{DISTRIBUTION}/"


def install_command(base_url: str) -> str:
    return f"pip install {base_url.rstrip('/')}{CLIENT_PATH}"


async def version(request: Request) -> Response:
    base = str(request.base_url)
    return reply({"version": VERSION, "verifier_version": verifier_version(), "requires_python": REQUIRES_PYTHON,
                  "client": {"wheel": CLIENT_PATH, "index": "/simple/", "install": install_command(base)}})


async def _wheel() -> Wheel:
    return await run_in_threadpool(served_wheel)


async def client_wheel(request: Request) -> Response:
    if request.path_params["name"] != WHEEL_NAME:
        raise ApiError(404, "not_found", f"this service serves one client package: {CLIENT_PATH}")
    wheel = await _wheel()
    # no-cache: the bytes change whenever the service's verifier does, under the same name.
    return Response(wheel.data, media_type="application/zip", headers={
        **SECURITY_HEADERS, "etag": f'"{wheel.sha256}"', "cache-control": "no-cache",
        "content-disposition": f'attachment; filename="{WHEEL_NAME}"'})


def _page(title: str, links: list[tuple[str, str]]) -> HTMLResponse:
    anchors = "".join(f'<a href="{escape(href)}">{escape(text)}</a><br>\n' for href, text in links)
    body = (f"<!DOCTYPE html>\n<html><head><meta name=\"pypi:repository-version\" content=\"1.0\">"
            f"<title>{escape(title)}</title></head><body>\n{anchors}</body></html>\n")
    return HTMLResponse(body, headers={**SECURITY_HEADERS, "cache-control": "no-cache"})


async def simple_root(request: Request) -> Response:
    return _page("Simple index", [(INDEX_PATH, DISTRIBUTION)])


async def simple_project(request: Request) -> Response:
    wheel = await _wheel()
    return _page(f"Links for {DISTRIBUTION}", [(f"{CLIENT_PATH}#sha256={wheel.sha256}", WHEEL_NAME)])


async def simple_alias(request: Request) -> Response:
    """`/simple/researchwiki/` and other spellings pip normalizes to the project's name (PEP 503)."""
    if request.path_params["name"].lower().replace("_", "-").replace(".", "-") in ("researchwiki", DISTRIBUTION):
        return RedirectResponse(INDEX_PATH, status_code=301, headers=SECURITY_HEADERS)
    raise ApiError(404, "not_found", f"this index holds one project: {DISTRIBUTION}")


CLIENT_ROUTES = [
    Route("/version", version, methods=["GET"]),
    Route("/client/{name}", client_wheel, methods=["GET"]),
    Route("/simple/", simple_root, methods=["GET"]),
    Route(INDEX_PATH, simple_project, methods=["GET"]),
    Route("/simple/{name}/", simple_alias, methods=["GET"]),
]
