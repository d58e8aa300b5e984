"""The provider backends: the Anthropic Messages API and the OpenAI (or OpenAI-compatible) API.

Each is a Backend like the command's (bytes in, bytes out; verifier/model/adapter.py): the
canonical request's `instructions` become the system prompt, the rest of the request (canonical
JSON) the one user message, and the answer schema of the request's kind (verifier/model/wire.py)
is asked for as structured output: Anthropic through a forced tool whose input schema it is,
OpenAI through `response_format` `json_schema`. The answer bytes go back to `ask`, which parses
them as strictly as a command's.

Through the providers' official SDKs, which own the wire format; the policy stays ours:
- the SDK's own retries are off (`max_retries=0`); a 429, a 5xx or a dropped connection is retried
  here, `retries` times at most, after a backoff that doubles from `backoff_s` up to a cap (a
  Retry-After the provider sends is honoured up to the same cap); a timeout is not retried;
- the API key comes from the environment variable `api_key_env` or the file `api_key_file`
  (which must be the caller's own and mode 0600), never from config.json; it is sent in the
  provider's header and nowhere else: no message, detail or log line of ours carries it, and any
  text from the provider is scrubbed of it before it is kept;
- the reply's model name and usage come back on the Exchange, priced from verifier/model/prices.py.
"""

from __future__ import annotations

import json
import os
import re
import stat
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeVar

from verifier.model.errors import ModelKeyError, ModelProviderError, ModelTimeoutError
from verifier.model.exchange import Exchange, sha256_of
from verifier.model.prices import Price, Usage, usage_of
from verifier.model.schema import MODEL_NAME_RE
from verifier.model.wire import answer_schema

if TYPE_CHECKING:
    import anthropic
    import openai

Provider = Literal["anthropic", "openai"]
DEFAULT_KEY_ENV: Mapping[Provider, str] = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
TOOL_NAME = "answer"
SCRUBBED = "[api key]"
DETAIL_MAX = 400
T = TypeVar("T")


@dataclass(frozen=True)
class ProviderSettings:
    """One provider backend's settings, from a `model` block of config.json (docs/models.md)."""

    provider: Provider
    model: str
    base_url: str | None
    timeout_s: float
    retries: int
    backoff_s: float
    backoff_max_s: float
    max_tokens: int
    api_key_env: str | None = None
    api_key_file: Path | None = None
    prices: Mapping[str, Price] | None = None


def read_key(settings: ProviderSettings, env: Mapping[str, str] | None = None) -> str:
    """The API key: from `api_key_file` (the caller's own, mode 0600) or the environment. The error
    names where the key was looked for, never a part of it."""
    if settings.api_key_file is not None:
        path = settings.api_key_file
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError as exc:
            raise ModelKeyError(f"{settings.provider} API key file {path}: {exc.strerror or exc}",
                                request_sha256="") from None
        try:
            info = os.fstat(fd)
            if info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) & 0o077:
                raise ModelKeyError(f"{settings.provider} API key file {path} must be yours and mode 0600 (it is "
                                    f"{stat.S_IMODE(info.st_mode):04o}): chmod 600 {path}", request_sha256="")
            key = os.read(fd, 1 << 16).decode("utf-8", errors="replace").strip()
        finally:
            os.close(fd)
        where = f"file {path}"
    else:
        name = settings.api_key_env or DEFAULT_KEY_ENV[settings.provider]
        key = (env if env is not None else os.environ).get(name, "").strip()
        where = f"environment variable {name}"
    if not key:
        raise ModelKeyError(f"no {settings.provider} API key: {where} is empty or unset (docs/models.md)",
                            request_sha256="")
    return key


def _scrub(text: str, key: str) -> str:
    return text.replace(key, SCRUBBED) if key else text


def _retry_after(headers: Mapping[str, str] | None) -> float | None:
    if not headers:
        return None
    try:
        return max(0.0, float(headers.get("retry-after", "")))
    except ValueError:
        return None  # an HTTP date, or nothing: our own backoff


@dataclass(frozen=True)
class _Failure:
    """What one attempt's exception means for the retry policy."""

    retry: bool
    timeout: bool
    status: int | None
    text: str
    wait_hint: float | None


def _classify(exc: Exception) -> _Failure | None:
    """Both SDKs name their errors alike: a status error carries the response, a timeout is a
    connection error of its own kind. Anything else is not an API failure (None: re-raised)."""
    kinds = {cls.__name__ for cls in type(exc).__mro__}
    if "APITimeoutError" in kinds:
        return _Failure(retry=False, timeout=True, status=None, text=str(exc), wait_hint=None)
    if "APIConnectionError" in kinds:
        return _Failure(retry=True, timeout=False, status=None, text=str(exc), wait_hint=None)
    if "APIStatusError" in kinds:
        response = getattr(exc, "response", None)
        status = int(getattr(exc, "status_code", 0) or 0)
        headers = dict(response.headers) if response is not None else None
        body = response.text if response is not None else str(exc)
        return _Failure(retry=status == 429 or status >= 500, timeout=False, status=status, text=body,
                        wait_hint=_retry_after(headers))
    return None


def call_with_retries(send: Callable[[], T], settings: ProviderSettings, *, key: str, request_sha256: str,
                      sleep: Callable[[float], None] = time.sleep) -> tuple[T, int]:
    """`send()` under the retry policy; returns its result and the number of attempts it took."""
    shown = f"{settings.provider} model {settings.model}"
    wait = settings.backoff_s
    for attempt in range(1, settings.retries + 2):
        try:
            return send(), attempt
        except Exception as exc:  # classified below; whatever is not an API failure re-raises
            failure = _classify(exc)
            if failure is None:
                raise
            detail = _scrub(failure.text, key)[:DETAIL_MAX]
            if failure.timeout:
                raise ModelTimeoutError(f"{shown} did not answer within its timeout of {settings.timeout_s:g} s",
                                        request_sha256=request_sha256, timeout_s=settings.timeout_s,
                                        stderr_tail=detail) from None
            said = f"answered HTTP {failure.status}" if failure.status else "could not be reached"
            if not failure.retry or attempt > settings.retries:
                tried = f" after {attempt} attempt{'s' if attempt > 1 else ''}" if failure.retry else ""
                raise ModelProviderError(f"{shown} {said}{tried}", request_sha256=request_sha256,
                                         status=failure.status, attempts=attempt, detail=detail) from None
            hint = failure.wait_hint
            sleep(min(settings.backoff_max_s, hint if hint is not None else wait))
            wait = min(settings.backoff_max_s, wait * 2)
    raise AssertionError("unreachable: the loop returns or raises")


def _split(request: bytes) -> tuple[str, str, str]:
    """(kind, instructions, the rest of the request as canonical JSON)."""
    value = json.loads(request)
    if not isinstance(value, dict):
        raise ValueError("a model request is a JSON object")
    instructions = str(value.pop("instructions", ""))
    kind = str(value.get("kind", ""))
    return kind, instructions, json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class ProviderBackend:
    """A provider API as a Backend; `env` (tests) replaces os.environ when the key is looked up."""

    settings: ProviderSettings
    env: Mapping[str, str] | None = None
    sleep: Callable[[float], None] = time.sleep

    @property
    def name(self) -> Provider:
        return self.settings.provider

    def exchange(self, request: bytes) -> Exchange:
        request_sha = sha256_of(request)
        key = read_key(self.settings, self.env)
        kind, instructions, body = _split(request)
        started = time.monotonic()
        if self.settings.provider == "anthropic":
            answer, model, usage, attempts = self._anthropic(key, kind, instructions, body, request_sha)
        else:
            answer, model, usage, attempts = self._openai(key, kind, instructions, body, request_sha)
        duration = time.monotonic() - started
        where = self.settings.base_url or "default endpoint"
        return Exchange(answer=answer, duration_s=duration,
                        detail=f"{self.settings.provider} {self.settings.model} at {where} ({attempts} attempt"
                               f"{'s' if attempts > 1 else ''})",
                        model=model, usage=usage)

    def _served(self, name: str | None) -> str:
        """The model the provider says answered, when it is a name we can record as it is (it goes
        into sealed baselines and ledger rows); otherwise the configured name."""
        return name if name and re.fullmatch(MODEL_NAME_RE, name) else self.settings.model

    def _anthropic(self, key: str, kind: str, instructions: str, body: str,
                   request_sha: str) -> tuple[bytes, str, Usage, int]:
        import anthropic  # noqa: PLC0415 - the SDK only when this backend is configured

        client = anthropic.Anthropic(api_key=key, base_url=self.settings.base_url, timeout=self.settings.timeout_s,
                                     max_retries=0)
        tool: anthropic.types.ToolParam = {
            "name": TOOL_NAME, "description": f"Give the {kind or 'requested'} answer.",
            "input_schema": answer_schema(kind)}

        def send() -> anthropic.types.Message:
            return client.messages.create(
                model=self.settings.model, max_tokens=self.settings.max_tokens, system=instructions,
                messages=[{"role": "user", "content": body}], tools=[tool],
                tool_choice={"type": "tool", "name": TOOL_NAME})

        try:
            message, attempts = call_with_retries(send, self.settings, key=key, request_sha256=request_sha,
                                                  sleep=self.sleep)
        finally:
            client.close()
        answer = _anthropic_answer(message)
        model = self._served(message.model)
        usage = usage_of(model, message.usage.input_tokens, message.usage.output_tokens, self.settings.prices)
        return answer, model, usage, attempts

    def _openai(self, key: str, kind: str, instructions: str, body: str,
                request_sha: str) -> tuple[bytes, str, Usage, int]:
        import openai  # noqa: PLC0415 - the SDK only when this backend is configured

        client = openai.OpenAI(api_key=key, base_url=self.settings.base_url, timeout=self.settings.timeout_s,
                               max_retries=0)

        def send() -> openai.types.chat.ChatCompletion:
            return client.chat.completions.create(
                model=self.settings.model, max_completion_tokens=self.settings.max_tokens,
                messages=[{"role": "system", "content": instructions}, {"role": "user", "content": body}],
                response_format={"type": "json_schema", "json_schema": {
                    "name": f"{kind or 'model'}_answer", "schema": answer_schema(kind), "strict": False}})

        try:
            completion, attempts = call_with_retries(send, self.settings, key=key, request_sha256=request_sha,
                                                     sleep=self.sleep)
        finally:
            client.close()
        content = completion.choices[0].message.content if completion.choices else None
        model = self._served(completion.model)
        used = completion.usage
        usage = usage_of(model, used.prompt_tokens if used else 0, used.completion_tokens if used else 0,
                         self.settings.prices)
        return (content or "").encode("utf-8"), model, usage, attempts


def _anthropic_answer(message: anthropic.types.Message) -> bytes:
    """The forced tool's input as canonical JSON; without a tool call, the text the model wrote
    (which `ask` then refuses or accepts as strictly as any answer)."""
    for block in message.content:
        if block.type == "tool_use" and block.name == TOOL_NAME:
            return json.dumps(block.input, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    return "".join(block.text for block in message.content if block.type == "text").encode("utf-8")
