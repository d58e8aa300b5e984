"""People in the UI's browser tests (issue 22): signing in through the page, waiting on what the
page's script shows, a hostile site on another loopback address (another origin and another site
for the browser), and plain HTTP calls carrying a session cookie."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from verifier.constants import SERVE_POLL_S

WAIT_S = 60  # a generous ceiling for a loaded machine; every wait ends as soon as its condition holds
EVIL_HOST = "127.0.0.2"  # another loopback address: a different origin and site from 127.0.0.1


def wait_for(driver: WebDriver, condition: Callable[[WebDriver], object]) -> None:
    WebDriverWait(driver, WAIT_S).until(condition)


def sign_in(driver: WebDriver, url: str, token: str) -> None:
    """Through the sign-in page, as a person would; returns on the "needs you" page."""
    driver.get(url + "/sign-in.html")
    driver.find_element(By.ID, "token").send_keys(token)
    driver.find_element(By.ID, "sign-in-button").click()
    wait_for(driver, lambda d: d.current_url.endswith("/needs-you.html"))


def result_text(driver: WebDriver, element_id: str) -> str:
    """The text the page's script put in a status line, once it put one there."""
    wait_for(driver, lambda d: d.find_element(By.ID, element_id).text.strip() != "")
    return str(driver.find_element(By.ID, element_id).text)


def session_cookie(driver: WebDriver) -> dict[str, object] | None:
    found: dict[str, object] | None = driver.get_cookie("rw_session")
    return found


@contextmanager
def evil_site(page: str) -> Iterator[str]:
    """A site on EVIL_HOST serving `page` at /; yields its URL."""
    body = page.encode("utf-8")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            del format, args

    server = ThreadingHTTPServer((EVIL_HOST, 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": SERVE_POLL_S}, daemon=True,
                              name="evil-site")
    thread.start()
    try:
        yield f"http://{EVIL_HOST}:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def post(url: str, body: dict[str, object], *, cookie: str | None = None, csrf: str | None = None,
         origin: str | None = None) -> tuple[int, dict[str, object]]:
    """A JSON POST as a script would make it; (status, JSON body)."""
    headers = {"content-type": "application/json"}
    if cookie is not None:
        headers["cookie"] = f"rw_session={cookie}"
    if csrf is not None:
        headers["x-rw-csrf"] = csrf
    if origin is not None:
        headers["origin"] = origin
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return reply.status, json.loads(reply.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def get_json(url: str, *, cookie: str | None = None) -> tuple[int, dict[str, object]]:
    headers = {"cookie": f"rw_session={cookie}"} if cookie is not None else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=60) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def error_code(answer: dict[str, object]) -> str | None:
    """The `error.code` of a service's answer, if it is a refusal."""
    error = answer.get("error")
    return str(error.get("code")) if isinstance(error, dict) else None


def newest_revertable(page: dict[str, object], slug: str) -> str:
    """The commit of the newest contribution the "needs you" page offers to revert in `slug`."""
    projects = page.get("projects")
    assert isinstance(projects, list)
    for project in projects:
        if isinstance(project, dict) and project.get("slug") == slug:
            offered = project.get("revertable")
            assert isinstance(offered, list) and offered and isinstance(offered[0], dict)
            return str(offered[0]["commit"])
    raise AssertionError(f"{slug} is not on the page")


def signed_in(server_url: str, token: str) -> tuple[str, str]:
    """(session cookie, CSRF token), signed in over HTTP as the page's script does."""
    request = urllib.request.Request(server_url + "/ui/session", data=json.dumps({"token": token}).encode(),
                                     headers={"content-type": "application/json", "origin": server_url},
                                     method="POST")
    with urllib.request.urlopen(request, timeout=60) as reply:
        cookie = reply.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Max-Age=" in cookie
    sid = cookie.split(";", 1)[0].split("=", 1)[1]
    status, page = get_json(server_url + "/needs-you.json", cookie=sid)
    assert status == 200
    return sid, str(page["csrf"])
