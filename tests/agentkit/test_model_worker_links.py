"""The platform worker's link leaves (issue 25 point 3, verifier/agentkit/modelworker.py): links
asked for as structured output, each checked with the verifier's own link rules before it is
submitted, the refused ones asked for again (bounded) and then dropped; on recorded answers."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.edits import landed_findings
from tests.support.loop import SEED_SKILL
from tests.support.model_worker import UNSHOWN, Scribe
from tests.support.world import NOW, SLUG, World
from verifier.agentkit.modelworker import Leaf, do_leaf
from verifier.cli.app import cli
from verifier.cli.main import COMMAND_MODULES
from verifier.constants import WORKER_LINK_RETRIES
from verifier.formats.skill import replace_section
from verifier.model.adapter import ModelConfig, RecordedBackend
from verifier.pipeline.submit import Submission
from verifier.roles.liveskill import read_live_skill
from verifier.roles.validation import WorkerError
from verifier.state.project import ProjectView
from verifier.store.home import Settings

assert COMMAND_MODULES  # the commands register on import


def _link_leaf(world: World, leaf_id: str, skill: str = SEED_SKILL) -> Leaf:
    world.leaf(leaf_id, "link", source_id=None, hypothesis_id="H1", hypothesis_revision=1)
    return Leaf(project=SLUG, leaf_id=leaf_id, kind="link", base=world.tip(),
                inputs={"hypothesis_id": "H1", "hypothesis_revision": 1}, hints=[], skill=skill,
                agent=world.agent.handle, operator=world.agent.operator, now=NOW)


def _requests(result_trace: dict[str, bytes]) -> list[dict[str, object]]:
    events = [json.loads(line) for line in result_trace["events.jsonl"].splitlines()]
    return [e["content"] for e in events if e["type"] == "tool_call" and e["content"].get("tool") == "model"]


def test_the_worker_links_findings_retrying_only_the_refused_links_and_dropping_what_still_fails(
        world: World, tmp_path: Path) -> None:
    findings = landed_findings(world)
    leaf = _link_leaf(world, "link-model")
    scribe = Scribe(tmp_path / "recorded")
    result = do_leaf(world.home, leaf, scribe)
    # One first answer (three links), then asks again for the two refused ones: the bad stance is
    # fixed, the finding never shown is named again until the retries run out, and is dropped.
    assert len(scribe.written) == 1 + WORKER_LINK_RETRIES
    retries = [json.loads(path.read_bytes()) for path in sorted(scribe.folder.glob("*.json"))]
    assert sorted(len(a["links"]) for a in retries) == [1, 2, 3]
    assert [c["retry"] for c in _requests(result.trace)] == [0, 2, 1]
    patch = result.patch.decode()
    assert UNSHOWN not in patch and "stance: contradicts" in patch and "refutes" not in patch
    assert json.loads(result.trace["manifest.json"])["level"] == "L3"
    assert "The figures agree." in patch and findings[0] in result.trace["context.md"].decode()
    verdict = world.submit(Submission(SLUG, "link-model", result.patch, result.trace, world.agent.token))
    assert verdict.outcome == "accepted", verdict.rejections
    links = ProjectView(world.repo.view(world.tip())).links
    assert sorted((link.finding_id, link.stance) for link in links.values() if link.leaf_id == "link-model") == \
        sorted([(findings[0], "supports"), (findings[1], "contradicts")])
    # A second run replays the recordings only, to the same patch.
    again = do_leaf(world.home, leaf, RecordedBackend(scribe.folder))
    assert again.patch == result.patch


def test_with_no_contradicting_link_the_worker_needs_enough_sources_for_its_none_found_note(
        world: World, tmp_path: Path) -> None:
    landed_findings(world)  # three findings, all from one source: below the floor of three
    agreeing = replace_section(SEED_SKILL, "link", "A model that never contradicts.\n")
    leaf = _link_leaf(world, "link-agree", skill=agreeing)
    with pytest.raises(WorkerError, match="fewer than the 3 a none-found note needs"):
        do_leaf(world.home, leaf, Scribe(tmp_path / "recorded"))


def test_rw_worker_run_does_a_link_leaf_with_the_configured_model(world: World, tmp_path: Path) -> None:
    landed_findings(world)
    recordings = tmp_path / "recorded"
    world.home.save_settings(Settings(durable=False, fetch="offline", models={
        "worker": ModelConfig(backend="recorded", recordings=str(recordings))}))
    leaf = _link_leaf(world, "link-cli")
    # The recording session: what the model says to the live skill, written as a model would answer.
    do_leaf(world.home, replace(leaf, skill=read_live_skill(world.home).decode()), Scribe(recordings))
    result = CliRunner().invoke(cli, ["worker", "run", SLUG, "link-cli", "--model", "worker"],
                                env={"RW_HOME": str(world.home.root), "RW_NOW": "2026-11-30T12:00:00Z",
                                     "RW_TOKEN": world.agent.token}, catch_exceptions=False)
    assert result.exit_code == 0 and result.output.startswith(f"ACCEPTED {SLUG}/link-cli by agent-a"), result.output
