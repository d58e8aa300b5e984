"""Scout leaves end to end: sources fetched honestly from a real HTTP server on loopback."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from tests.support.policy import allow_loopback_sources
from tests.support.world import FIXTURES, NOW, SLUG, ScriptedAgent, World, make_home
from verifier.agentkit.objects import source_files
from verifier.constants import SERVE_POLL_S
from verifier.formats.source import parse_source
from verifier.state.layout import queue_path
from verifier.store.fetcher import HttpFetcher, OfflineFetcher
from verifier.writes.project import init_project

PAGE = b"Quillmark reported 14 paying customers for Anchor in February 2026.\n"
PDF = (FIXTURES / "sources-raw" / "verification-layer-eval-2026.pdf").read_bytes()


class _Handler(BaseHTTPRequestHandler):
    seen: ClassVar[list[tuple[str, str]]] = []

    def do_GET(self) -> None:
        self.seen.append((self.path, self.headers.get("User-Agent", "")))
        routes = {"/robots.txt": (200, b"User-agent: *\nDisallow: /private/\n", "text/plain"),
                  "/doc.txt": (200, PAGE, "text/plain"), "/report.pdf": (200, PDF, "application/pdf"),
                  "/private/doc.txt": (200, PAGE, "text/plain")}
        status, body, kind = routes.get(self.path, (404, b"not found", "text/plain"))
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    _Handler.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": SERVE_POLL_S}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def online(world: World) -> World:
    world.fetcher = HttpFetcher(user_agent="ResearchWiki-Verifier/test", timeout_s=2.0, allow_private_addresses=True)
    allow_loopback_sources(world)
    return world


def scouted(world: World, url: str, data: bytes = PAGE, media: str = "text/plain") -> dict[str, bytes]:
    return source_files(url=url, data=data, media_type=media, fetched_by="agent-a", retrieved_at=NOW,
                        language="en", rights="public", published=date(2026, 2, 1), title="Anchor update",
                        leaf_id="scout-1")


def test_scouted_source_is_fetched_once_and_accepted(online: World, server: str) -> None:
    online.leaf("scout-1", "scout", source_id=None, gap="customer counts")
    verdict = online.submit(online.creation("scout-1", scouted(online, f"{server}/doc.txt")))
    assert verdict.outcome == "accepted", verdict.line()
    assert [path for path, _ in _Handler.seen] == ["/robots.txt", "/doc.txt"]
    assert {agent for _, agent in _Handler.seen} == {"ResearchWiki-Verifier/test"}


def test_pdf_source_travels_as_binary_literal(online: World, server: str) -> None:
    online.leaf("scout-1", "scout", source_id=None)
    files = scouted(online, f"{server}/report.pdf", PDF, "application/pdf")
    verdict = online.submit(online.creation("scout-1", files))
    assert verdict.outcome == "accepted", verdict.line()
    pdf_path = next(p for p in files if p.endswith(".pdf"))
    assert online.repo.view(online.tip()).read(pdf_path) == PDF


def test_robots_refusal_rejects(online: World, server: str) -> None:
    online.leaf("scout-1", "scout", source_id=None)
    verdict = online.submit(online.creation("scout-1", scouted(online, f"{server}/private/doc.txt")))
    assert verdict.rejections[0].code == "url_unresolved"
    assert "robots" in verdict.rejections[0].message
    assert "/private/doc.txt" not in [path for path, _ in _Handler.seen]


def test_missing_page_rejects(online: World, server: str) -> None:
    online.leaf("scout-1", "scout", source_id=None)
    verdict = online.submit(online.creation("scout-1", scouted(online, f"{server}/gone.txt")))
    assert verdict.rejections[0].code == "url_unresolved" and "404" in verdict.rejections[0].message


def test_offline_mode_holds_unchecked_sources_for_a_person(world: World) -> None:
    world.leaf("scout-1", "scout", source_id=None)
    verdict = world.submit(world.creation("scout-1", scouted(world, "https://news.example.net/a.txt")))
    assert verdict.outcome == "held" and verdict.holds == ["sources"]
    assert any("URL not checked" in note for note in verdict.notes)


def test_bytes_the_url_does_not_serve_are_held(online: World, server: str) -> None:
    """Made-up text under a real URL never enters the corpus unseen: it waits for a person."""
    online.leaf("scout-1", "scout", source_id=None)
    files = scouted(online, f"{server}/doc.txt", b"Quillmark reported 9,000 paying customers.\n")
    verdict = online.submit(online.creation("scout-1", files))
    assert verdict.outcome == "held", verdict.line()
    assert any("served other bytes" in note for note in verdict.notes)
    view = online.repo.view(online.tip())
    assert all(view.read(path) is None for path in files)


def test_held_sources_go_to_the_queue(tmp_path: Path) -> None:
    template = tmp_path / "template"
    shutil.copytree(FIXTURES / "demo-project", template)
    project = template / "PROJECT.md"
    project.write_text(project.read_text().replace("holds: []", "holds: [ sources ]"))
    home = make_home(tmp_path / "home")
    init_project(home, SLUG, now=NOW, template=template)
    token = home.identities.add("agent-a", "op-a", "agent", NOW)
    world = World(home, ScriptedAgent(home, "agent-a", "op-a", token), OfflineFetcher())
    world.leaf("scout-1", "scout", source_id=None)
    files = scouted(world, "https://news.example.net/a.txt")
    verdict = world.submit(world.creation("scout-1", files))
    assert verdict.outcome == "held" and verdict.holds == ["sources"]
    view = world.repo.view(world.tip())
    for path in files:
        assert view.read(path) is None
        assert view.read(queue_path("sources", path)) == files[path]
    record = next(p for p in files if p.endswith(".yaml"))
    assert parse_source(view.read(queue_path("sources", record)) or b"", record).status == "staged"
    # An extract leaf on a held source is refused until a person approves it.
    source_id = record.rsplit("/", 1)[1][:-5]
    world.leaf("extract-held", source_id=source_id)
    refused = world.submit(world.creation("extract-held", world.findings("extract-held")))
    assert refused.rejections[0].code == "source_unavailable"
    assert "held in queue/sources" in refused.rejections[0].message
