"""The platform's own worker (verifier/agentkit/modelworker.py): on recorded answers, through the
skill gate end to end, and against a loopback server speaking a provider's wire format."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tests.support.loop import SEED_SKILL, with_extract
from tests.support.model_worker import SENTENCE_RE, Scribe
from tests.support.provider_server import Reply, anthropic_message, openai_completion, provider_server
from tests.support.world import NOTE_ID, NOW, SLUG, World
from verifier.agentkit.modelworker import Leaf, ModelWorker, do_leaf, validation_worker
from verifier.cli.app import cli
from verifier.cli.main import COMMAND_MODULES
from verifier.model.adapter import ModelConfig, RecordedBackend, backend_from_config
from verifier.model.wire import answer_schema
from verifier.pipeline.submit import Submission
from verifier.roles.liveskill import install_skill, live_skill_version
from verifier.roles.validation import load_validation_set, replay
from verifier.store.home import Settings

assert COMMAND_MODULES  # the commands register on import
VERBATIM = "## Extract\n\nQuote every excerpt verbatim: copy it from `rw source text`, never retype it.\n"
KEY = "sk-test-worker-0123456789abcdef0123456789"


def rw(world: World, *args: str, **env: str) -> tuple[int, str]:
    full = {"RW_HOME": str(world.home.root), "RW_NOW": "2026-11-30T12:00:00Z", **env}
    result = CliRunner().invoke(cli, list(args), env=full, catch_exceptions=False)
    return result.exit_code, result.output


def _answers(folder: Path) -> list[dict[str, object]]:
    return [json.loads(path.read_bytes()) for path in sorted(folder.glob("*.json"))]


def test_the_platform_worker_on_recorded_answers_retries_only_the_failed_excerpt(tmp_path: Path) -> None:
    scribe = Scribe(tmp_path / "recorded")
    scores = replay(load_validation_set(), with_extract(SEED_SKILL, VERBATIM), ModelWorker(scribe), now=NOW)
    assert [(s.kind, s.outcome, s.objects) for s in scores] == [("extract", "accepted", 3), ("extract", "accepted", 3),
                                                                ("scout", "accepted", 1)]
    # Per extract leaf: one first answer (three findings) and one retry answer for the one tidied
    # excerpt only; one scout answer.
    answers = _answers(scribe.folder)
    assert len(answers) == 5
    assert sorted(len(a["findings"]) for a in answers if a["kind"] == "extract") == [1, 1, 3, 3]  # type: ignore[arg-type]
    # A second run replays the recordings only: the same verdicts, nothing new written.
    again = replay(load_validation_set(), with_extract(SEED_SKILL, VERBATIM), ModelWorker(RecordedBackend(
        scribe.folder)), now=NOW)
    assert [(s.outcome, s.objects) for s in again] == [(s.outcome, s.objects) for s in scores]


def test_the_skill_gate_keeps_a_better_skill_with_the_platform_worker_on_recorded_answers(
        world: World, tmp_path: Path) -> None:
    recordings = tmp_path / "recorded"
    validation = load_validation_set()
    candidate = with_extract(SEED_SKILL, VERBATIM)
    for skill in (SEED_SKILL, candidate):  # the recording session: what the model said to each skill
        replay(validation, skill, ModelWorker(Scribe(recordings)), now=NOW)
    install_skill(world.home, SEED_SKILL)
    world.home.save_settings(Settings(durable=False, fetch="offline", models={
        "worker": ModelConfig(backend="recorded", recordings=str(recordings))}))
    assert isinstance(validation_worker(world.home), ModelWorker)  # no command configured: the platform's own
    path = tmp_path / "SKILL.md"
    path.write_text(candidate)
    code, out = rw(world, "loop", "gate", "--kind", "extract", "--candidate", str(path), "--json")
    decision = json.loads(out)
    assert code == 0 and decision["outcome"] == "kept", out
    assert decision["best"] < decision["score"]
    assert decision["skill_version"] == live_skill_version(world.home)


def _exact_answer(text: str) -> dict[str, object]:
    return {"kind": "extract", "findings": [
        {"excerpt": s, "statement": f"The note says: {s[:80]}", "limitation": "One analyst's note."}
        for s in SENTENCE_RE.findall(text)[:3]]}


def test_the_worker_asks_a_provider_for_findings_and_records_the_exchange_at_l3(world: World, tmp_path: Path) -> None:
    world.leaf("extract-model")
    text = world.agent.source_text(SLUG, NOTE_ID, world.tip())
    with provider_server([Reply(body=anthropic_message(_exact_answer(text)))]) as (url, script):
        backend = backend_from_config(ModelConfig(backend="anthropic", name="claude-sonnet-4-5", base_url=url),
                                      base=tmp_path, env={"ANTHROPIC_API_KEY": KEY})
        leaf = Leaf(project=SLUG, leaf_id="extract-model", kind="extract", base=world.tip(),
                    inputs={"source_id": NOTE_ID}, hints=[], skill=with_extract(SEED_SKILL, VERBATIM),
                    agent="agent-a", operator="op-a", now=NOW)
        result = do_leaf(world.home, leaf, backend)
    [seen] = script.seen
    sent = json.loads(seen.body["messages"][0]["content"])
    assert sent["kind"] == "extract" and sent["source_text"] == text and "verbatim" in sent["skill"]
    assert seen.body["tools"][0]["input_schema"] == answer_schema("extract")
    manifest = json.loads(result.trace["manifest.json"])
    assert manifest["level"] == "L3" and manifest["model"] == "claude-sonnet-4-5" and manifest["tokens"] == 1200
    assert text in result.trace["context.md"].decode()  # the full context
    events = [json.loads(line) for line in result.trace["events.jsonl"].splitlines()]
    assert any(e["type"] == "tool_result" and "answer" in e["content"] for e in events)
    assert all(KEY.encode() not in data for data in result.trace.values())
    verdict = world.submit(Submission(SLUG, "extract-model", result.patch, result.trace, world.agent.token))
    assert verdict.outcome == "accepted", verdict.rejections


def test_over_the_wire_only_the_failed_excerpt_is_asked_for_again(world: World, tmp_path: Path) -> None:
    world.leaf("extract-retry")
    text = world.agent.source_text(SLUG, NOTE_ID, world.tip())
    first = _exact_answer(text)
    findings = list(first["findings"])  # type: ignore[call-overload]
    exact = findings[2]["excerpt"]
    findings[2] = {**findings[2], "excerpt": exact.replace(" the ", " a ", 1)}  # a tidied quote
    fixed = {"kind": "extract", "findings": [{**findings[2], "excerpt": exact}]}
    replies = [Reply(body=openai_completion(json.dumps({"kind": "extract", "findings": findings}))),
               Reply(body=openai_completion(json.dumps(fixed)))]
    with provider_server(replies) as (url, script):
        backend = backend_from_config(ModelConfig(backend="openai", name="gpt-4.1", base_url=f"{url}/v1"),
                                      base=tmp_path, env={"OPENAI_API_KEY": KEY})
        leaf = Leaf(project=SLUG, leaf_id="extract-retry", kind="extract", base=world.tip(),
                    inputs={"source_id": NOTE_ID}, hints=[], skill=SEED_SKILL, agent="agent-a", operator="op-a",
                    now=NOW)
        result = do_leaf(world.home, leaf, backend)
    assert len(script.seen) == 2
    again = json.loads(script.seen[1].body["messages"][1]["content"])
    assert [item["excerpt"] for item in again["retry"]] == [findings[2]["excerpt"]] and again["max_findings"] == 1
    assert "not found in the source text" in again["retry"][0]["problem"]
    verdict = world.submit(Submission(SLUG, "extract-retry", result.patch, result.trace, world.agent.token))
    assert verdict.outcome == "accepted", verdict.rejections
