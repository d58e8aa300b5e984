"""What the service hands an agent on another machine: a leaf's payload (a review leaf's never
names the author's trace), a source's exact derived text, and who a token is."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.support.agent import OutsideAgent
from tests.support.service_harness import Server, live_leaf, start
from tests.support.world import FIXTURES, NOTE_ID, NOW, SLUG, World, make_home
from verifier.agentkit.scripted import ScriptedAgent
from verifier.store.fetcher import OfflineFetcher
from verifier.writes.project import init_project

pytestmark = pytest.mark.slow  # a real `rw serve` on loopback


@dataclass
class Site:
    world: World
    server: Server


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    home = make_home(tmp_path_factory.mktemp("endpoints") / "home")
    init_project(home, SLUG, now=NOW, template=FIXTURES / "demo-project")
    token = home.identities.add("agent-a", "op-a", "agent", NOW)
    world = World(home, ScriptedAgent(home, "agent-a", "op-a", token), OfflineFetcher())
    server = start(home.root)
    yield Site(world, server)
    server.stop()


def test_the_payload_of_an_extract_leaf(site: Site) -> None:
    live_leaf(site.world.home, "extract-pay-1")
    body = site.server.client().get(f"/projects/{SLUG}/leaves/extract-pay-1/payload", auth=False).body
    assert body["contract"]["kind"] == "extract" and body["state"] == "open"
    assert body["inputs"]["source"]["record"]["source_id"] == NOTE_ID
    assert body["field_guide"].startswith("#")
    missing = site.server.client().get(f"/projects/{SLUG}/leaves/no-such-leaf/payload", auth=False)
    assert missing.status == 404 and missing.error_code == "no_leaf"


def test_a_review_payload_never_names_the_authors_trace(site: Site) -> None:
    live_leaf(site.world.home, "extract-pay-2")
    verdict = site.world.submit(site.world.extract("extract-pay-2"), now=datetime.now(UTC).replace(microsecond=0))
    assert verdict.outcome == "accepted" and verdict.trace_id is not None, verdict.line()
    target = sorted(site.world.findings("extract-pay-2"))[0]
    live_leaf(site.world.home, "review-pay-1", kind="review", object_path=target)
    reply = site.server.client().get(f"/projects/{SLUG}/leaves/review-pay-1/payload", auth=False)
    assert reply.status == 200 and target in str(reply.body)
    assert verdict.trace_id not in str(reply.body) and "trc_" not in str(reply.body)


def test_source_text_is_the_verifiers_derived_text(site: Site) -> None:
    tip = site.world.tip()
    body = site.server.client().get(f"/projects/{SLUG}/sources/{NOTE_ID}/text", auth=False).body
    assert body["text"] == site.world.agent.source_text(SLUG, NOTE_ID, tip)
    for bad in ("src_0000000000000000", "not-a-source"):
        reply = site.server.client().get(f"/projects/{SLUG}/sources/{bad}/text", auth=False)
        assert reply.status == 404 and reply.error_code == "no_source"


def test_whoami_needs_the_token_and_names_agent_and_operator(site: Site) -> None:
    assert site.server.client().get("/whoami", auth=False).status == 401
    body = site.server.client(site.world.agent.token).get("/whoami").body
    assert body == {"agent": "agent-a", "operator": "op-a", "type": "agent"}


def test_leaf_show_and_source_text_work_with_a_server_alone(site: Site, tmp_path: Path) -> None:
    live_leaf(site.world.home, "extract-pay-3")
    agent = OutsideAgent(tmp_path, site.server.url, site.world.agent.token)  # no RW_HOME in its environment
    shown = json.loads(agent.rw("leaf", "show", SLUG, "extract-pay-3", "--server", site.server.url, "--json").out)
    assert shown["contract"]["leaf_id"] == "extract-pay-3" and "field_guide" in shown
    text = agent.rw("source", "text", SLUG, NOTE_ID, "--server", site.server.url).out
    assert text.rstrip("\n") == site.world.agent.source_text(SLUG, NOTE_ID, site.world.tip())
    claimed = agent.rw("claim", SLUG, "--warm")
    assert claimed.out.startswith(f"claimed {SLUG}/extract-")
