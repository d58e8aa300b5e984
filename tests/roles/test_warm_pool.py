"""The warm-leaf pool on the service: the board marks warm leaves, a client claims "a warm leaf"
without knowing ids, and taking one tops the pool up from the next warm source."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.support.service_harness import Server, start
from tests.support.world import FIXTURES
from verifier.roles.planner import local_commons, wake
from verifier.store.home import Settings
from verifier.wiring import open_home
from verifier.writes.project import init_project

pytestmark = pytest.mark.slow  # a real `rw serve` on loopback

SLUG = "edge-inference"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    root = tmp_path / "home"
    open_home(root).save_settings(Settings(durable=False, fetch="offline", warm_pool=2))
    home = open_home(root)
    template = tmp_path / "template"
    shutil.copytree(FIXTURES / f"seed-{SLUG}", template)
    project = template / "PROJECT.md"  # a budget of two leaves a wake: the third warm source waits
    project.write_text(project.read_text().replace("leaves_max: 12", "leaves_max: 2"))
    init_project(home, SLUG, now=datetime.now(UTC).replace(microsecond=0), template=template)
    running = start(root)
    yield running
    running.stop()


def test_taking_a_warm_leaf_tops_the_pool_up(server: Server) -> None:
    home = open_home(server.home)
    first = wake(home, SLUG, datetime.now(UTC).replace(microsecond=0), commons=local_commons(home))
    assert first.plan is not None and [c.warm for c in first.plan.leaves] == [True, True]
    a = server.client(home.identities.add("agent-a", "op-a", "agent", datetime.now(UTC)))
    b = server.client(home.identities.add("agent-b", "op-b", "agent", datetime.now(UTC)))
    nobody = server.client(home.identities.add("agent-c", "op-c", "agent", datetime.now(UTC)))

    taken_a = a.post_json(f"/projects/{SLUG}/leaves/warm/claim", {"ttl_s": 600})
    assert taken_a.status == 200, taken_a.body
    board = a.get(f"/projects/{SLUG}/leaves", {"state": "all"}, auth=False).body["leaves"]
    warm_open = [leaf for leaf in board if leaf["warm"] and leaf["state"] == "open"]
    assert len(warm_open) == 2  # one left, and one new on the third warm source
    sources = {leaf["inputs"]["source_id"] for leaf in board if leaf["warm"]}
    assert len(sources) == 3

    taken_b = b.post_json(f"/projects/{SLUG}/leaves/warm/claim", {})
    assert taken_b.status == 200 and taken_b.body["leaf"]["leaf_id"] != taken_a.body["leaf"]["leaf_id"]
    last = nobody.post_json(f"/projects/{SLUG}/leaves/warm/claim", {})
    assert last.status == 200  # the third warm source's leaf
    empty = server.client(home.identities.add("agent-d", "op-d", "agent", datetime.now(UTC)))
    none_left = empty.post_json(f"/projects/{SLUG}/leaves/warm/claim", {})
    assert none_left.status == 404 and none_left.error_code == "no_warm_leaf"
    assert a.post_json(f"/projects/{SLUG}/leaves/warm/claim", {"agent": "agent-b"}).error_code == "actor_mismatch"
    assert server.client(None).post_json(f"/projects/{SLUG}/leaves/warm/claim", {}).status == 401
