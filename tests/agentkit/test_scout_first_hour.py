"""A scout leaf through a real `rw serve` (issue 23 point 7): `rw check` predicts exactly what the
service decides because it checks URLs in the service's own fetch mode and says which; a URL that
does not resolve is refused `url_unresolved` by both, and the leaf stays workable with another URL
by doing what `rw submit` says (the failed source is recorded; its files must go)."""

from __future__ import annotations

import re
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.support.agent import OutsideAgent
from tests.support.first_hour import Steward, agent_token, initialised, serving
from tests.support.service_harness import restart, start
from verifier.constants import SERVE_POLL_S
from verifier.store.home import Settings

# Real `rw` processes, a real service or real git pushes: end to end, so in the slow set.
pytestmark = pytest.mark.slow

SLUG = "world-model-eval"
PAGE = b"Quillmark reported 14 paying customers for Anchor in February 2026, up from 9 in January.\n"


class _Pages(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        status, body = (200, PAGE) if self.path == "/doc.txt" else (404, b"not found")
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def pages() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": SERVE_POLL_S}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def scouting_project(root: Path, mode: str) -> tuple[Steward, str]:
    """`rw init` of the demo project with plain http and the loopback address allowed as sources,
    the service fetching in `mode`, and a scout leaf a person added with `rw leaf add`."""
    template = root / "scouting"
    shutil.copytree(Path(__file__).resolve().parents[2] / "fixtures" / "demo-project", template)
    project = template / "PROJECT.md"
    text = project.read_text(encoding="utf-8")
    edited = text.replace("  allow_domains: []  # empty = any", '  allow_http: true\n  allow_domains: [ "127.0.0.1" ]')
    assert edited != text, "the fixture PROJECT.md changed; update this edit"
    project.write_text(edited, encoding="utf-8")
    steward = initialised(root, SLUG, template, settings=Settings(durable=False, fetch=mode,
                                                                  allow_private_addresses=True))
    person = agent_token(steward.home, "ericxtang", human=True)  # PROJECT.md's steward adds leaves
    leaf_id = steward.rw("leaf", "add", SLUG, "--kind", "scout", "--gap", "analyst notes on Anchor",
                         env={"RW_TOKEN": person}).stdout.strip()
    return steward, leaf_id


def scout(agent: OutsideAgent, work: Path, url: str, data: bytes) -> None:
    fetched = work.parent / "fetched.txt"
    fetched.write_bytes(data)
    agent.rw("new", "source", "--url", url, "--file", str(fetched), "--media-type", "text/plain", "--language",
             "en", "--rights", "public", "--published", "2026-02-20", cwd=work)
    agent.rw("trace", "add", "reasoning", f"Fetched {url} and kept its bytes as served.", cwd=work)


def outcome_of(check_out: str) -> str:
    return "rejected" if check_out.startswith("[") else "ok"


def test_a_failed_scout_is_predicted_then_the_leaf_takes_another_url(tmp_path: Path, pages: str) -> None:
    steward, leaf_id = scouting_project(tmp_path, "online")
    with serving(steward.home) as server:
        agent = OutsideAgent(tmp_path, server.url, agent_token(steward.home))
        work = Path(agent.rw("work", SLUG, leaf_id).out.strip())
        scout(agent, work, f"{pages}/gone.txt", PAGE)
        checked = agent.rw("check", cwd=work, ok=False)
        assert checked.out.startswith("[url_unresolved]"), checked.out  # not "held": it fetched as the service does
        assert "fetch: online (the service's mode)" in checked.out
        submitted = agent.rw("submit", cwd=work, ok=False)
        assert submitted.out.startswith(f"REJECTED {SLUG}/{leaf_id} ") and "[url_unresolved]" in submitted.out, \
            submitted.out
        hint = re.search(r"\(rm ([^)]*)\)", submitted.err)
        assert hint is not None, submitted.err
        for path in hint.group(1).split():
            (work / path).unlink()
        scout(agent, work, f"{pages}/doc.txt", PAGE)
        assert agent.rw("check", cwd=work).out.startswith("OK")
        again = agent.rw("submit", cwd=work)
        assert again.out.startswith(f"ACCEPTED {SLUG}/{leaf_id}"), again.out + again.err  # not `stale`


def test_offline_rw_check_says_the_services_mode_and_agrees_with_it(tmp_path: Path, pages: str) -> None:
    steward, leaf_id = scouting_project(tmp_path, "offline")
    with serving(steward.home) as server:
        agent = OutsideAgent(tmp_path, server.url, agent_token(steward.home))
        work = Path(agent.rw("work", SLUG, leaf_id).out.strip())
        scout(agent, work, f"{pages}/gone.txt", PAGE)
        checked = agent.rw("check", cwd=work)
        assert "fetch: offline (the service's mode)" in checked.out and "URL not checked" in checked.out
        assert checked.out.startswith("OK") and "the service will hold it for a person (sources)" in checked.out
        submitted = agent.rw("submit", cwd=work)
        assert submitted.out.startswith(f"HELD {SLUG}/{leaf_id}"), submitted.out  # as rw check said


def test_a_running_service_keeps_its_fetch_mode_until_restarted_as_the_readme_says(tmp_path: Path) -> None:
    steward, leaf_id = scouting_project(tmp_path, "offline")
    server = start(steward.home.root)
    try:
        client = server.client()
        assert client.get(f"/projects/{SLUG}/leaves/{leaf_id}/payload", auth=False).body["fetch"]["mode"] == "offline"
        steward.home.save_settings(Settings(durable=False, fetch="online", allow_private_addresses=True))
        assert client.get(f"/projects/{SLUG}/leaves/{leaf_id}/payload", auth=False).body["fetch"]["mode"] == "offline"
        server.stop()
        server = restart(server)
        fresh = server.client().get(f"/projects/{SLUG}/leaves/{leaf_id}/payload", auth=False).body
        assert fresh["fetch"] == {"mode": "online", "private_addresses": True}
    finally:
        server.stop()
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert "reads config.json once, when it starts" in readme and "restart it" in readme
