"""The UI on the service (`rw serve`): HTML pages under `/`, their JSON at `.json`, and the two
static files. Reading is open, like every read of the service; every UI response carries a
Content-Security-Policy that forbids inline script, besides the service's own headers.

People act here too (issue 22): `/sign-in.html` exchanges a person's token for a session cookie
(`verifier.ui.sessions`), `/needs-you.html` shows what waits for them, and each decision is a
same-origin JSON POST to `/ui/act/<slug>` that calls the same writes as the `rw` commands with the
signed-in person as the actor (`verifier.service.ui_actions`). Every UI POST must prove it comes
from this origin (an allowed Origin, or `Sec-Fetch-Site: same-origin`) and, once signed in, carry
the session's CSRF token in `X-RW-CSRF`; a request whose session is gone, expired, or whose token
was revoked is answered 401 (a page: a redirect to sign in).
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from verifier.errors import FormatError, HistoryBrokenError, NotFound, VerifierError
from verifier.pipeline.writer import ProjectWriter
from verifier.service.auth import origin_allowed
from verifier.service.core import Service, clock
from verifier.service.errors import SECURITY_HEADERS, ApiError, error_response
from verifier.service.limits import read_json
from verifier.service.ui_actions import act
from verifier.ui.needs import ProjectNeeds, needs_you_page, sign_in_page
from verifier.ui.render import CSP, model_json, render, static_file
from verifier.ui.sessions import Session, SessionStore, csrf_matches
from verifier.ui.site import open_reader, project_page, projects_page

SESSION_COOKIE = "rw_session"
CSRF_HEADER = "x-rw-csrf"

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


# --- people: sign in, what needs them, their decisions ---------------------------------------------


def _sessions(request: Request) -> SessionStore:
    """One store per application, made on first use (its table is created then)."""
    store: SessionStore | None = getattr(request.app.state, "ui_sessions", None)
    if store is None:
        svc = _service(request)
        store = SessionStore(svc.db, svc.home.identities)
        request.app.state.ui_sessions = store
    return store


def _same_origin(request: Request) -> None:
    """A UI POST must say it comes from this origin: browsers send Origin (and Sec-Fetch-Site) on
    every POST, so one with neither, or naming elsewhere, is not our page's."""
    names = _service(request).config.host_names()
    origin = request.headers.get("origin")
    fetch_site = request.headers.get("sec-fetch-site")
    elsewhere = origin is not None and not origin_allowed(origin, names, request.headers.get("host"))
    if fetch_site not in (None, "same-origin") or elsewhere or (origin is None and fetch_site != "same-origin"):
        raise ApiError(403, "cross_origin", "the UI acts only on requests from its own pages (same origin)")


async def _body(request: Request, svc: Service) -> dict[str, object]:
    return await read_json(request.stream(), request.headers, cap=svc.config.max_json_bytes,
                           idle_s=svc.config.body_idle_timeout_s, total_s=svc.config.body_timeout_s)


def _secure(request: Request) -> bool:
    """Served over TLS: to us directly, or to the browser through a proxy that ends TLS (the page's
    own origin, which `_same_origin` has checked names this service, is https)."""
    return request.url.scheme == "https" or (request.headers.get("origin") or "").startswith("https://")


def _clear(response: Response, request: Request) -> Response:
    response.delete_cookie(SESSION_COOKIE, path="/", secure=_secure(request), httponly=True, samesite="strict")
    return response


async def _session(request: Request) -> Session | None:
    sid = request.cookies.get(SESSION_COOKIE)
    if not sid:
        return None
    session = await run_in_threadpool(_sessions(request).find, sid, clock())
    if session is not None:
        request.state.actor = session.actor.handle  # for the access log
    return session


async def _signed_in(request: Request) -> Session:
    """The request's live session with its CSRF token checked, or 401/403."""
    _same_origin(request)
    session = await _session(request)
    if session is None:
        raise ApiError(401, "no_session", "sign in first (/sign-in.html): no session, it expired, or its token "
                                          "was revoked")
    if not csrf_matches(session.session_id, request.headers.get(CSRF_HEADER)):
        raise ApiError(403, "bad_csrf", f"the request did not carry this session's CSRF token ({CSRF_HEADER})")
    return session


def _html(template: str, model: dict[str, object], path: str) -> Response:
    return Response(render(template, dict(model), path).encode("utf-8"), media_type="text/html; charset=utf-8",
                    headers=UI_HEADERS)


async def sign_in(request: Request) -> Response:
    session = await _session(request)
    return _html("sign_in.html", sign_in_page(session.actor.handle if session else None), "sign-in.html")


async def open_session(request: Request) -> Response:
    _same_origin(request)
    svc = _service(request)
    body = await _body(request, svc)
    token = body.get("token")
    if not isinstance(token, str) or not token.strip() or set(body) != {"token"}:
        raise ApiError(400, "bad_request", 'send {"token": "rwt_..."} and nothing else')
    try:
        session = await run_in_threadpool(_sessions(request).sign_in, token, clock())
    except VerifierError as exc:
        return _clear(error_response(exc), request)
    request.state.actor = session.actor.handle
    answer = JSONResponse({"ok": True, "handle": session.actor.handle, "expires_at": session.expires_at.isoformat()},
                          headers=UI_HEADERS)
    answer.set_cookie(SESSION_COOKIE, session.session_id, max_age=int((session.expires_at - clock()).total_seconds()),
                      path="/", secure=_secure(request), httponly=True, samesite="strict")
    return answer


async def close_session(request: Request) -> Response:
    session = await _signed_in(request)
    await run_in_threadpool(_sessions(request).sign_out, session.session_id)
    return _clear(JSONResponse({"ok": True, "description": "signed out"}, headers=UI_HEADERS), request)


def _needs(svc: Service) -> list[ProjectNeeds]:
    out = []
    for slug in svc.home.projects():
        broken = None
        try:
            ProjectWriter.refuse_if_broken(svc.home, slug)
        except HistoryBrokenError as exc:
            broken = str(exc)
        try:
            reader = open_reader(svc.project(slug), slug, clock(), svc.home.source_text)
            reader.rows  # noqa: B018 - read now: a tip that cannot be read is shown as refusing writes
        except (NotFound, FormatError, VerifierError) as exc:
            out.append(ProjectNeeds(slug, None, broken or f"the project cannot be read: {exc}"))
            continue
        out.append(ProjectNeeds(slug, reader, broken))
    return out


async def needs_you(request: Request) -> Response:
    session = await _session(request)
    as_json = request.url.path.endswith(".json")
    if session is None:
        if as_json:
            raise ApiError(401, "no_session", "sign in first (/sign-in.html)")
        return _clear(RedirectResponse("/sign-in.html", status_code=303, headers=UI_HEADERS), request)
    svc = _service(request)
    model = needs_you_page(await run_in_threadpool(_needs, svc), session.actor.handle, session.csrf)
    if as_json:
        return Response(model_json(model), media_type="application/json", headers=UI_HEADERS)
    return _html("needs_you.html", model, "needs-you.html")


async def act_route(request: Request) -> Response:
    session = await _signed_in(request)
    svc = _service(request)
    body = await _body(request, svc)
    slug = request.path_params["slug"]
    await run_in_threadpool(svc.project, slug)  # 404 for a project that is not here
    try:
        done = await run_in_threadpool(act, svc, session.actor, slug, body)
    except VerifierError as exc:
        return error_response(exc)  # a refusal (403 from the authority rule, 409, 404...) as it came
    return JSONResponse(done, headers=UI_HEADERS)


UI_ROUTES = [
    Route("/sign-in.html", sign_in, methods=["GET"]),
    Route("/needs-you.html", needs_you, methods=["GET"]),
    Route("/needs-you.json", needs_you, methods=["GET"]),
    Route("/ui/session", open_session, methods=["POST"]),
    Route("/ui/sign-out", close_session, methods=["POST"]),
    Route("/ui/act/{slug}", act_route, methods=["POST"]),
    Route("/", home_page, methods=["GET"]),
    Route("/index.html", home_page, methods=["GET"]),
    Route("/index.json", home_page, methods=["GET"]),
    Route("/static/{name}", static, methods=["GET"]),
    Route("/p/{slug}", project_root, methods=["GET"]),
    Route("/p/{slug}/", project, methods=["GET"]),
    Route("/p/{slug}/{rest:path}", project, methods=["GET"]),
]
