"""Failed sources (design §11, issue 10): a scout whose URL does not resolve is rejected, and the
source is recorded with `status: failed` and the reason; no extract leaf is made on it."""

from __future__ import annotations

import socket
from datetime import date

import pytest

from tests.support.policy import allow_loopback_sources
from tests.support.world import NOW, World
from verifier.agentkit.objects import source_files
from verifier.audits.replay import replay
from verifier.errors import ConflictError
from verifier.formats.ids import source_id_for
from verifier.formats.source import parse_source
from verifier.pipeline.ledger import read_chain
from verifier.state.layout import source_record_path
from verifier.store.fetcher import HttpFetcher

PAGE = b"Quillmark reported 14 paying customers for Anchor in February 2026.\n"


def closed_port() -> int:
    """A loopback port nothing listens on: connecting to it fails at once."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_a_failed_scout_leaves_a_failed_record_and_no_extract_leaf(world: World) -> None:
    world.fetcher = HttpFetcher(user_agent="ResearchWiki-Verifier/test", timeout_s=2.0, allow_private_addresses=True)
    allow_loopback_sources(world)
    url = f"http://127.0.0.1:{closed_port()}/doc.txt"
    world.leaf("scout-1", "scout", source_id=None, gap="customer counts")
    files = source_files(url=url, data=PAGE, media_type="text/plain", fetched_by="agent-a", retrieved_at=NOW,
                         language="en", rights="public", published=date(2026, 2, 1), title="Anchor update",
                         leaf_id="scout-1")
    verdict = world.submit(world.creation("scout-1", files))
    assert verdict.outcome == "rejected" and verdict.rejections[0].code == "url_unresolved", verdict.line()
    source_id = source_id_for(url)
    view = world.repo.view(world.tip())
    record = parse_source(view.read(source_record_path(source_id)) or b"", "record")
    assert record.status == "failed" and record.failure and record.leaf_id == "scout-1"
    assert [p for p in files if not p.endswith(".yaml") and view.read(p) is not None] == []  # bytes not kept
    row = list(read_chain(view))[-1][1]
    assert (row.outcome, row.reason_code) == ("rejected", "url_unresolved") and row.commit == verdict.commit
    assert row.commit is not None and world.repo.commit(row.commit).author.name == "agent-a"
    with pytest.raises(ConflictError, match="status failed"):
        world.leaf("extract-9", source_id=source_id)
    assert replay(world.repo).ok
