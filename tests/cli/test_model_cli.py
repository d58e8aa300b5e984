"""`rw model check` on two roles answered by two backends, and `rw worker run` on a loopback provider."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from tests.support.provider_server import Reply, anthropic_message, openai_completion, provider_server
from tests.support.world import NOTE_ID, SLUG, World
from verifier.cli.app import cli
from verifier.cli.main import COMMAND_MODULES
from verifier.model.adapter import ModelConfig
from verifier.store.home import Settings

assert COMMAND_MODULES  # the commands register on import
KEY = "sk-test-cli-00112233445566778899aabbccddeeff"
RESOLVE = {"kind": "resolve", "verdict": "true", "confidence": 0.9, "rationale": "Standard references say so."}
SENTENCE = r"[A-Z][^.!?\n]{40,260}[.!?]"


def rw(world: World, *args: str) -> tuple[int, str]:
    env = {"RW_HOME": str(world.home.root), "RW_NOW": "2026-11-30T12:00:00Z", "RW_TOKEN": world.agent.token,
           "ANTHROPIC_API_KEY": KEY, "LOCAL_LLM_KEY": KEY}
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    return result.exit_code, result.output


def test_model_check_sends_one_request_per_configured_role_and_says_what_answered(world: World) -> None:
    with provider_server([Reply(body=anthropic_message(RESOLVE))]) as (anthropic_url, anthropic_seen), \
            provider_server([Reply(body=openai_completion(json.dumps(RESOLVE), model="llama-3.1-8b"))]) as (
                local_url, local_seen):
        world.home.save_settings(Settings(durable=False, fetch="offline", models={
            "baseline": ModelConfig(backend="anthropic", name="claude-sonnet-4-5", base_url=anthropic_url),
            "worker": ModelConfig(backend="openai", name="llama-3.1-8b", base_url=f"{local_url}/v1",
                                  api_key_env="LOCAL_LLM_KEY")}))
        code, out = rw(world, "model", "check")
        assert code == 0, out
        lines = dict(line.split(": ", 1) for line in out.strip().splitlines())
        assert lines["baseline"].startswith("anthropic claude-sonnet-4-5 answered in ")
        assert "1200 tokens, usd 0.006" in lines["baseline"]
        assert lines["worker"].startswith("openai llama-3.1-8b answered in ") and "usd" not in lines["worker"]
        assert lines["resolve"] == lines["plan"] == "not configured"
        assert len(anthropic_seen.seen) == 1 and len(local_seen.seen) == 1
        code, out = rw(world, "model", "check", "--json")
        rows = {row["role"]: row for row in json.loads(out)}
        assert rows["worker"]["model"] == "llama-3.1-8b" and rows["propose"]["configured"] is None
    assert KEY not in out


def test_model_check_fails_loudly_when_a_role_cannot_answer(world: World) -> None:
    with provider_server([Reply(status=401, body={"error": {"message": "bad key", "type": "auth"}})]) as (url, _):
        world.home.save_settings(Settings(durable=False, fetch="offline", model=ModelConfig(
            backend="openai", name="gpt-4.1", base_url=f"{url}/v1", api_key_env="LOCAL_LLM_KEY")))
        code, out = rw(world, "model", "check")
    assert code == 1 and "baseline: FAILED (openai gpt-4.1 at" in out and "answered HTTP 401" in out
    assert KEY not in out


def test_worker_run_does_an_extract_leaf_with_the_configured_model_and_submits_it(world: World) -> None:
    world.leaf("extract-cli")
    text = world.agent.source_text(SLUG, NOTE_ID, world.tip())
    findings = [{"excerpt": s, "statement": f"The note says: {s[:80]}", "limitation": "One analyst's note."}
                for s in re.findall(SENTENCE, text)[:3]]
    answer = json.dumps({"kind": "extract", "findings": findings})
    with provider_server([Reply(body=openai_completion(answer, model="llama-3.1-8b"))]) as (url, script):
        world.home.save_settings(Settings(durable=False, fetch="offline", models={
            "worker": ModelConfig(backend="openai", name="llama-3.1-8b", base_url=f"{url}/v1",
                                  api_key_env="LOCAL_LLM_KEY")}))
        code, out = rw(world, "worker", "run", SLUG, "extract-cli")
    assert code == 0 and out.startswith("ACCEPTED world-model-eval/extract-cli by agent-a: 3 findings"), out
    assert script.seen[0].body["response_format"]["json_schema"]["name"] == "extract_answer"


def test_worker_run_without_a_model_for_the_role_says_what_to_configure(world: World) -> None:
    world.leaf("extract-none")
    code, out = rw(world, "worker", "run", SLUG, "extract-none", "--model", "plan")
    assert code == 2 and "no model is configured for plan: add `models.plan`" in out
