"""The design's end-to-end test (§13) on a seed project, in one test: Planner wake → leaves as
Commons tasks → a scripted agent claims a warm leaf through the real service on loopback →
accepted → rescore → digest shows the new findings; a second wake then plans link, skeptic and
review leaves on them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.support.planner import findings_from
from tests.support.service_harness import Server, start
from tests.support.world import FIXTURES, make_home
from verifier.agentkit.scripted import ScriptedAgent
from verifier.roles.planner import local_commons, wake
from verifier.state.layout import USE_SCORES, finding_path
from verifier.writes.project import init_project

pytestmark = pytest.mark.slow  # a real `rw serve` on loopback

SLUG = "open-weights"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    home = make_home(tmp_path / "home")
    init_project(home, SLUG, now=datetime.now(UTC).replace(microsecond=0), template=FIXTURES / f"seed-{SLUG}")
    running = start(home.root)
    yield running
    running.stop()


def test_planner_to_digest_through_the_service(server: Server) -> None:
    home = make_home(server.home)
    commons = local_commons(home)
    token = home.identities.add("newcomer", "op-new", "agent", datetime.now(UTC))
    agent = ScriptedAgent(home, "newcomer", "op-new", token)

    # 1. The Planner wakes: warm extract leaves (the seed's sources are marked warm), posted as tasks.
    first = wake(home, SLUG, datetime.now(UTC).replace(microsecond=0), commons=commons)
    assert first.plan is not None and first.landed is not None
    warm = [c for c in first.plan.leaves if c.warm]
    assert len(warm) == 3 and all(c.kind == "extract" for c in warm)
    assert all(m.kind == "task" for c in first.plan.leaves for m in commons.thread(SLUG, c.leaf_id))
    client = server.client(token)
    board = client.get(f"/projects/{SLUG}/leaves", auth=False)
    assert sorted(leaf["leaf_id"] for leaf in board.body["leaves"] if leaf["warm"]) == sorted(c.leaf_id for c in warm)
    task = client.get(f"/projects/{SLUG}/leaves/{warm[0].leaf_id}/messages", auth=False)
    assert task.body["messages"][0]["kind"] == "task"

    # 2. The agent asks for "a warm leaf" without knowing an id, and gets the same one on a retry.
    claimed = client.post_json(f"/projects/{SLUG}/leaves/warm/claim", {})
    assert claimed.status == 200, claimed.body
    leaf_id = claimed.body["leaf"]["leaf_id"]
    assert claimed.body["leaf"]["warm"] and claimed.body["claim"]["agent"] == "newcomer"
    assert client.post_json(f"/projects/{SLUG}/leaves/warm/claim", {}).body["leaf"]["leaf_id"] == leaf_id

    # 3. It does the leaf and submits through the service: accepted, and the use scores are rescored.
    source_id = claimed.body["contract"]["inputs"]["source_id"]
    text = agent.source_text(SLUG, source_id, claimed.body["contract"]["base_revision"])
    submission = agent.extract(SLUG, leaf_id, findings_from(text), now=datetime.now(UTC).replace(microsecond=0))
    reply = client.submit(SLUG, leaf_id, submission.bundle, submission.patch)
    assert reply.status == 201 and reply.body["verdict"]["outcome"] == "accepted", reply.body
    repo = home.project(SLUG)
    view = repo.view(repo.tip())
    new_findings = sorted(name[:-5] for path in view.walk("findings") for name in [path.rsplit("/", 1)[1]])
    assert len(new_findings) == 3
    use = json.loads(view.read(USE_SCORES) or b"{}")
    assert use, "the landing rescored the project"

    # 4. The digest shows them.
    digest = client.get(f"/projects/{SLUG}/digest", auth=False).body
    assert digest["corpus"]["findings"] == 3
    assert any(move["kind"] == "extract" and move["actor"] == "newcomer" for move in digest["moves"])
    assert leaf_id not in [leaf["leaf_id"] for leaf in digest["open_leaves"]]

    # 5. The second wake plans link, skeptic and review leaves on the new findings.
    second = wake(home, SLUG, datetime.now(UTC).replace(microsecond=0), commons=commons, force=True)
    assert second.plan is not None and second.landed is not None
    kinds = {c.kind for c in second.plan.leaves}
    assert {"link", "skeptic", "review"} <= kinds
    link = next(c for c in second.plan.leaves if c.kind == "link")
    assert sorted(link.inputs.finding_ids) == new_findings and link.inputs.hypothesis_id == "H1"
    reviewed = sorted(c.inputs.object_path or "" for c in second.plan.leaves if c.kind == "review")
    assert reviewed == sorted(finding_path(f) for f in new_findings)
    assert all(commons.thread(SLUG, c.leaf_id) for c in second.plan.leaves)  # posted as tasks too
