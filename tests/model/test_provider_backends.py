"""The provider backends against a loopback server speaking each provider's wire format.

The real SDK client (anthropic, openai) sends real HTTP to 127.0.0.1; the server plays a script.
Each test asserts what was sent, what came back, and that the API key is in no message, detail,
log record or answer.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from tests.support.provider_server import (
    Reply,
    anthropic_message,
    error_body,
    openai_completion,
    provider_server,
)
from verifier.errors import FormatError
from verifier.model.adapter import (
    ModelAnswerInvalidError,
    ModelConfig,
    ModelNotJSONError,
    ModelTimeoutError,
    ask,
    backend_from_config,
)
from verifier.model.errors import ModelKeyError, ModelProviderError
from verifier.model.providers import ProviderBackend
from verifier.model.schema import RESOLVE_INSTRUCTIONS, BaselineRequest, ResolveAnswer, ResolveRequest
from verifier.model.wire import answer_schema
from verifier.store.home import Home

KEY = "sk-test-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
ANSWER = {"kind": "resolve", "verdict": "true", "confidence": 0.75, "rationale": "link-1 says so."}
REQUEST = ResolveRequest(hypothesis_id="H1", revision=1, statement="A thing happens.", criterion="It is reported.",
                         measure="The report.", check_date=date(2026, 6, 1))
PROVIDERS = ("anthropic", "openai")


def _ok(provider: str, answer: dict[str, object] | None = ANSWER, *, text: str = "") -> Reply:
    if provider == "anthropic":
        return Reply(body=anthropic_message(answer, text=text))
    return Reply(body=openai_completion(text or json.dumps(answer)))


def _backend(provider: str, url: str, tmp_path: Path, **extra: object) -> tuple[ProviderBackend, list[float]]:
    name = "claude-sonnet-4-5" if provider == "anthropic" else "gpt-4.1"
    config = ModelConfig.model_validate({
        "backend": provider, "name": name, "base_url": url if provider == "anthropic" else f"{url}/v1",
        "timeout_s": 5, "retries": 2, "backoff_s": 0.01, **extra})
    backend = backend_from_config(config, base=tmp_path, env={"ANTHROPIC_API_KEY": KEY, "OPENAI_API_KEY": KEY})
    assert isinstance(backend, ProviderBackend)
    slept: list[float] = []
    return replace(backend, sleep=slept.append), slept


def _key_headers(headers: dict[str, str]) -> list[str]:
    return [name for name, value in headers.items() if KEY in value]


def _no_key_in_logs(caplog: pytest.LogCaptureFixture) -> None:
    for record in caplog.records:
        assert KEY not in record.getMessage() and KEY not in str(record.__dict__)


@pytest.fixture(autouse=True)
def _debug_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)  # the SDKs' and httpx's debug logging included


def test_anthropic_sends_the_request_as_a_forced_tool_and_records_model_and_cost(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with provider_server([_ok("anthropic")]) as (url, script):
        backend, _ = _backend("anthropic", url, tmp_path)
        reply = ask(backend, REQUEST)
    assert reply.answer == ResolveAnswer.model_validate(ANSWER)
    assert reply.backend == "anthropic" and reply.model == "claude-sonnet-4-5"
    assert reply.usage is not None and (reply.usage.input_tokens, reply.usage.output_tokens) == (1000, 200)
    assert reply.usage.usd == pytest.approx((1000 * 3.0 + 200 * 15.0) / 1e6)
    [seen] = script.seen
    assert seen.path == "/v1/messages"
    user = json.loads(seen.body["messages"][0]["content"])
    assert "instructions" not in user and user["kind"] == "resolve" and user["hypothesis_id"] == "H1"
    assert seen.body == {
        "model": "claude-sonnet-4-5", "max_tokens": 4096, "system": RESOLVE_INSTRUCTIONS,
        "messages": [{"role": "user", "content": seen.body["messages"][0]["content"]}],
        "tools": [{"name": "answer", "description": "Give the resolve answer.",
                   "input_schema": answer_schema("resolve")}],
        "tool_choice": {"type": "tool", "name": "answer"}}
    assert "anthropic-version" in seen.headers
    assert _key_headers(seen.headers) in (["x-api-key"], ["authorization"])  # as the SDK sends it; once
    assert KEY not in reply.detail
    _no_key_in_logs(caplog)


def test_openai_sends_the_request_with_a_json_schema_response_format(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with provider_server([_ok("openai")]) as (url, script):
        backend, _ = _backend("openai", url, tmp_path)
        reply = ask(backend, REQUEST)
    assert reply.answer.verdict == "true" and reply.model == "gpt-4.1" and reply.backend == "openai"
    assert reply.usage is not None and reply.usage.usd == pytest.approx((1000 * 2.0 + 200 * 8.0) / 1e6)
    [seen] = script.seen
    assert seen.path == "/v1/chat/completions"
    assert seen.body == {
        "model": "gpt-4.1", "max_completion_tokens": 4096,
        "messages": [{"role": "system", "content": RESOLVE_INSTRUCTIONS},
                     {"role": "user", "content": seen.body["messages"][1]["content"]}],
        "response_format": {"type": "json_schema", "json_schema": {
            "name": "resolve_answer", "schema": answer_schema("resolve"), "strict": False}}}
    assert seen.headers["authorization"] == f"Bearer {KEY}" and _key_headers(seen.headers) == ["authorization"]
    _no_key_in_logs(caplog)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_429_is_retried_after_the_retry_after_the_provider_sent(provider: str, tmp_path: Path) -> None:
    limited = Reply(status=429, body=error_body(provider, "slow down"), headers={"retry-after": "0.02"})
    with provider_server([limited, _ok(provider)]) as (url, script):
        backend, slept = _backend(provider, url, tmp_path)
        reply = ask(backend, REQUEST)
    assert reply.answer.verdict == "true" and "2 attempts" in reply.detail
    assert len(script.seen) == 2 and script.seen[0].body == script.seen[1].body
    assert slept == [0.02]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_500_is_retried_with_backoff_until_the_budget_ends_and_the_key_stays_out(
        provider: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # A hostile or careless server that echoes the key it was sent: the error still never shows it.
    failing = Reply(status=500, body=error_body(provider, f"internal error for key {KEY}"))
    with provider_server([failing]) as (url, script):
        backend, slept = _backend(provider, url, tmp_path)
        with pytest.raises(ModelProviderError) as caught:
            ask(backend, REQUEST)
    assert len(script.seen) == 3 and slept == [0.01, 0.02]  # retries=2: three attempts, backoff doubling
    error = caught.value
    assert error.status == 500 and error.attempts == 3 and "HTTP 500 after 3 attempts" in str(error)
    assert KEY not in str(error) and KEY not in error.detail and "[api key]" in error.detail
    _no_key_in_logs(caplog)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_client_error_is_not_retried(provider: str, tmp_path: Path) -> None:
    with provider_server([Reply(status=400, body=error_body(provider, "bad model"))]) as (url, script):
        backend, slept = _backend(provider, url, tmp_path)
        with pytest.raises(ModelProviderError, match=r"answered HTTP 400; .*bad model"):
            ask(backend, REQUEST)
    assert len(script.seen) == 1 and slept == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_provider_that_does_not_answer_in_time_is_a_timeout(provider: str, tmp_path: Path) -> None:
    with provider_server([Reply(delay_s=60.0, body=_ok(provider).body)]) as (url, script):
        backend, slept = _backend(provider, url, tmp_path, timeout_s=0.5)
        with pytest.raises(ModelTimeoutError, match=r"did not answer within its timeout of 0\.5 s"):
            ask(backend, REQUEST)
    assert len(script.seen) == 1 and slept == []  # a timeout has spent the budget: not retried


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_answer_that_is_not_the_requested_json_is_refused(provider: str, tmp_path: Path) -> None:
    with provider_server([_ok(provider, None, text="I think it is true.")]) as (url, _):
        backend, _ = _backend(provider, url, tmp_path)
        with pytest.raises(ModelNotJSONError, match="the answer is not JSON"):
            ask(backend, REQUEST)
    wrong = {**ANSWER, "verdict": "maybe"}
    with provider_server([_ok(provider, wrong)]) as (url, _):
        backend, _ = _backend(provider, url, tmp_path)
        with pytest.raises(ModelAnswerInvalidError, match="answer field verdict"):
            ask(backend, REQUEST)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_sealed_call_withholds_what_the_provider_said(provider: str, tmp_path: Path) -> None:
    request = BaselineRequest(hypothesis_id="H1", revision=1, statement="A thing happens.", criterion="Reported.")
    failing = Reply(status=500, body=error_body(provider, "the verdict would be true"))
    with provider_server([failing]) as (url, _):
        backend, _ = _backend(provider, url, tmp_path, retries=0)
        with pytest.raises(ModelProviderError) as caught:
            ask(backend, request)
    assert "verdict would be" not in str(caught.value) and "withheld" in str(caught.value)


def test_the_key_comes_from_a_0600_file_and_a_file_others_can_read_is_refused(tmp_path: Path) -> None:
    key_file = tmp_path / "anthropic.key"
    key_file.write_text(KEY + "\n")
    key_file.chmod(0o644)
    with provider_server([_ok("anthropic")]) as (url, script):
        config = ModelConfig(backend="anthropic", name="claude-sonnet-4-5", base_url=url, api_key_file="anthropic.key")
        backend = backend_from_config(config, base=tmp_path, env={})
        with pytest.raises(ModelKeyError, match="mode 0600 \\(it is 0644\\)") as caught:
            ask(backend, REQUEST)
        assert KEY not in str(caught.value) and script.seen == []
        key_file.chmod(0o600)
        assert ask(backend, REQUEST).answer.verdict == "true"
    assert _key_headers(script.seen[0].headers)


def test_a_missing_key_names_the_variable_and_sends_nothing(tmp_path: Path) -> None:
    with provider_server([_ok("openai")]) as (url, script):
        config = ModelConfig(backend="openai", name="gpt-4.1", base_url=f"{url}/v1", api_key_env="MY_LOCAL_KEY")
        with pytest.raises(ModelKeyError, match="environment variable MY_LOCAL_KEY is empty or unset"):
            ask(backend_from_config(config, base=tmp_path, env={"OPENAI_API_KEY": KEY}), REQUEST)
    assert script.seen == []


def test_a_key_written_into_config_json_is_refused_without_echoing_it(tmp_path: Path) -> None:
    root = tmp_path / "home"
    root.mkdir()
    (root / "config.json").write_text(json.dumps({"model": {"backend": "anthropic", "name": "claude-sonnet-4-5",
                                                            "api_key": KEY}}))
    (root / "config.json").chmod(0o600)
    with pytest.raises(FormatError) as caught:
        Home.read_settings(root)
    assert "may not hold a credential (api_key)" in str(caught.value) and KEY not in str(caught.value)


def test_an_unknown_model_costs_none_and_config_prices_override_the_table(tmp_path: Path) -> None:
    with provider_server([Reply(body=openai_completion(json.dumps(ANSWER), model="local-llama"))]) as (url, _):
        backend, _ = _backend("openai", url, tmp_path)
        reply = ask(backend, REQUEST)
    assert reply.model == "local-llama" and reply.usage is not None and reply.usage.usd is None
    prices = {"local-llama": {"input_per_mtok": 0.0, "output_per_mtok": 1.0}}
    with provider_server([Reply(body=openai_completion(json.dumps(ANSWER), model="local-llama"))]) as (url, _):
        backend, _ = _backend("openai", url, tmp_path, prices=prices)
        reply = ask(backend, REQUEST)
    assert reply.usage is not None and reply.usage.usd == pytest.approx(200 / 1e6)


def test_a_served_model_name_that_cannot_be_recorded_as_it_is_gives_way_to_the_configured_one(
        tmp_path: Path) -> None:
    with provider_server([Reply(body=openai_completion(json.dumps(ANSWER), model="gpt 4.1 <latest>"))]) as (url, _):
        backend, _ = _backend("openai", url, tmp_path)
        assert ask(backend, REQUEST).model == "gpt-4.1"
