"""Every frontier-model call goes through here: a provider API, a configured command, or recorded answers.

A backend is bytes in, bytes out: it receives the canonical request JSON and returns the answer
bytes. `ask` does the rest the same way for every backend: it hashes the request and the answer
bytes as sent and received, parses the answer strictly against the request's kind, and returns a
ModelReply that says which backend answered.

- CommandBackend runs an argument list (never a shell string) in its own process group, writes the
  request to stdin, reads the answer from stdout, caps the output, and kills the whole group on
  timeout, on overflow and when the command exits, so nothing it started outlives the call. It
  gets a minimal environment (`MINIMAL_ENV`, plus the variables the config names in `pass_env`),
  never the caller's: a person's RW_TOKEN is in the environment of the edit that triggers a call.
- ProviderBackend (verifier/model/providers.py) calls the Anthropic Messages API or the OpenAI
  (or an OpenAI-compatible) API through the provider's SDK, with structured output, our own
  timeout and retry policy, and the reply's model name and usage (priced) on the Exchange.
- RecordedBackend replays answers from `<folder>/<request sha256>.json`, for the demo and the
  tests. Its replies carry backend "recorded", a model name prefixed "recorded:" and a rationale
  prefixed "[recorded answer]", so wherever its output lands, it says it was not a live call.

An answer is untrusted text. For a baseline call (sealed until resolution) an error says only
what kind of problem the answer had, never a part of it, not even a field name: an unknown
field named after the verdict would otherwise reach a public ledger row.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Annotated, Generic, Literal, Protocol, overload

from pydantic import BaseModel, Field, StringConstraints, model_validator

from verifier.constants import (
    MODEL_BACKOFF_MAX_S,
    MODEL_BACKOFF_S,
    MODEL_MAX_TOKENS,
    MODEL_RETRIES,
)
from verifier.constants import MODEL_TIMEOUT_S as DEFAULT_TIMEOUT_S
from verifier.formats.base import Strict
from verifier.model.errors import (
    STDERR_TAIL,
    ModelAnswerInvalidError,
    ModelError,
    ModelExitError,
    ModelNotJSONError,
    ModelOutputTooLargeError,
    ModelStartError,
    ModelTimeoutError,
    RecordingMissingError,
)
from verifier.model.exchange import Exchange, sha256_of
from verifier.model.prices import Price, Usage
from verifier.model.providers import DEFAULT_KEY_ENV, ProviderBackend, ProviderSettings
from verifier.model.schema import (
    MODEL_NAME_RE,
    A,
    AnswerError,
    BaselineAnswer,
    BaselineRequest,
    ModelRequest,
    ResolveAnswer,
    ResolveRequest,
    parse_answer,
    request_bytes,
)

__all__ = [  # the errors and the Exchange are re-exported: callers import them from here
    "Backend", "BackendName", "CommandBackend", "Exchange", "ModelAnswerInvalidError", "ModelConfig", "ModelError",
    "ModelExitError", "ModelNotJSONError", "ModelOutputTooLargeError", "ModelReply", "ModelStartError",
    "ModelTimeoutError", "RecordedBackend", "RecordingBackend", "RecordingMissingError", "ask", "ask_for",
    "backend_from_config", "record_answer", "recording_path",
]

BackendName = Literal["command", "recorded", "anthropic", "openai"]
DEFAULT_MAX_OUTPUT = 1 << 20
RECORDED_PREFIX = "recorded:"
RECORDED_RATIONALE = "[recorded answer] "
# What a model command inherits: enough to find programs, a home and a locale. Nothing else of
# the caller's environment (RW_TOKEN, RW_HOME, cloud credentials) unless the config names it.
MINIMAL_ENV = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR")
NEVER_PASSED = frozenset({"RW_TOKEN"})  # a person's bearer token: no model needs it, any could leak it
ENV_NAME_RE = r"^[A-Za-z_][A-Za-z0-9_]{0,127}$"
# After the command exits or is killed, how long to wait for its pipes to drain. Its process
# group is dead by then; only a process that left the group could hold a pipe open longer.
_DRAIN_S = 5.0


_sha256 = sha256_of


class Backend(Protocol):
    @property
    def name(self) -> BackendName: ...

    def exchange(self, request: bytes) -> Exchange: ...


@dataclass(frozen=True)
class ModelReply(Generic[A]):
    """A parsed answer and the record of the call that produced it."""

    answer: A
    backend: BackendName
    request_sha256: str
    answer_sha256: str
    duration_s: float
    detail: str
    served_model: str | None = None  # the model the provider says answered
    usage: Usage | None = None  # its tokens and cost (usd None: the model's price is unknown)

    @property
    def recorded(self) -> bool:
        return self.backend == "recorded"

    @property
    def model(self) -> str:
        """The model name to record (Baseline.model, ledger rows): never blank, and marked
        `recorded:` when the answer was replayed. A provider's own word on which model answered
        wins over the answer's claim about itself."""
        name = self.served_model or self.answer.model or "unknown"
        return name if not self.recorded or name.startswith(RECORDED_PREFIX) else RECORDED_PREFIX + name


def _mark_recorded(answer: A) -> A:
    name = answer.model or "unknown"
    update: dict[str, str] = {"model": name if name.startswith(RECORDED_PREFIX) else RECORDED_PREFIX + name}
    if isinstance(answer, ResolveAnswer) and not answer.rationale.startswith(RECORDED_RATIONALE):
        update["rationale"] = RECORDED_RATIONALE + answer.rationale
    return answer.model_copy(update=update)


@overload
def ask(backend: Backend, request: BaselineRequest) -> ModelReply[BaselineAnswer]: ...
@overload
def ask(backend: Backend, request: ResolveRequest) -> ModelReply[ResolveAnswer]: ...
def ask(backend: Backend, request: ModelRequest) -> ModelReply[BaselineAnswer] | ModelReply[ResolveAnswer]:
    """Send `request` through `backend` and parse the answer against the request's kind."""
    if isinstance(request, BaselineRequest):
        return _ask(backend, request, BaselineAnswer)
    return _ask(backend, request, ResolveAnswer)


def ask_for(backend: Backend, request: BaseModel, model: type[A]) -> ModelReply[A]:
    """Send any strict request (the platform worker's, verifier/model/work.py) and parse the
    answer as `model`, the same way `ask` does for the Resolver's calls."""
    return _ask(backend, request, model)


def _ask(backend: Backend, request: BaseModel, model: type[A]) -> ModelReply[A]:
    try:
        return _exchange(backend, request, model)
    except ModelError as exc:
        if isinstance(request, BaselineRequest):
            raise exc.withhold() from None  # not even the traceback's cause may carry the answer
        raise


def _exchange(backend: Backend, request: BaseModel, model: type[A]) -> ModelReply[A]:
    data = request_bytes(request)
    request_sha = _sha256(data)
    exchange = backend.exchange(data)
    answer_sha = _sha256(exchange.answer)
    try:
        answer = parse_answer(model, exchange.answer)
    except AnswerError as exc:
        where = f"{backend.name} backend ({exchange.detail})"
        error = ModelNotJSONError if exc.problem == "not_json" else ModelAnswerInvalidError
        headline, detail = exc.headline, exc.detail
        if isinstance(request, BaselineRequest):
            # The headline names fields and values from the answer; a sealed call's error says
            # only which kind of problem it was. The rest stays on `.detail`, never in a message.
            headline = ("the answer is not JSON" if exc.problem == "not_json" else
                        "the answer does not match the baseline answer schema (docs/resolver.md)")
            detail = f"{exc.headline}; {exc.detail}" if exc.detail else exc.headline
        raise error(f"{where}: {headline}", request_sha256=request_sha, answer_sha256=answer_sha,
                    detail=detail) from None
    if backend.name == "recorded":
        answer = _mark_recorded(answer)
    return ModelReply(answer=answer, backend=backend.name, request_sha256=request_sha,
                      answer_sha256=answer_sha, duration_s=exchange.duration_s, detail=exchange.detail,
                      served_model=exchange.model, usage=exchange.usage)


# --- the command backend ------------------------------------------------------------------


class _Sink:
    """Collects a pipe: all of stdout up to a cap, or the last `tail` bytes of stderr."""

    def __init__(self, *, cap: int | None = None, tail: int | None = None) -> None:
        self.cap, self.tail = cap, tail
        self.data = bytearray()
        self.overflow = threading.Event()

    def feed(self, chunk: bytes) -> None:
        self.data += chunk
        if self.cap is not None and len(self.data) > self.cap:
            del self.data[self.cap:]
            self.overflow.set()
        if self.tail is not None and len(self.data) > self.tail:
            del self.data[: len(self.data) - self.tail]


def _drain(pipe: IO[bytes], sink: _Sink) -> None:
    # The reading thread closes its own pipe: closing it from another thread while a read is
    # blocked could hand the descriptor number to a new file and this read to the wrong data.
    try:
        with contextlib.suppress(OSError, ValueError):
            while chunk := os.read(pipe.fileno(), 65536):
                sink.feed(chunk)
                if sink.overflow.is_set():
                    return
    finally:
        with contextlib.suppress(OSError):
            pipe.close()


def _feed(pipe: IO[bytes], data: bytes) -> None:
    # A command that exits without reading all of stdin is judged by its exit status, not by
    # the broken pipe.
    with contextlib.suppress(BrokenPipeError, OSError, ValueError):
        pipe.write(data)
    with contextlib.suppress(BrokenPipeError, OSError, ValueError):
        pipe.close()


def _exited(pid: int) -> bool:
    # WNOWAIT: look without reaping, so the pid (which is also the process-group id) cannot be
    # reused before the group is killed.
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is not None


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _tail_text(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace").strip()
    return text if text else "(empty)"


@dataclass(frozen=True)
class CommandBackend:
    """Run `argv` with the request on stdin and read the answer from stdout."""

    argv: tuple[str, ...]
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_output_bytes: int = DEFAULT_MAX_OUTPUT
    env: Mapping[str, str] | None = None  # exactly this environment; None: `environment()`
    cwd: Path | None = None
    pass_env: tuple[str, ...] = ()  # names passed from the caller's environment beyond MINIMAL_ENV
    name: BackendName = field(default="command", init=False)

    def __post_init__(self) -> None:
        if not self.argv or not all(isinstance(part, str) and part for part in self.argv):
            raise ValueError("a model command is a non-empty list of non-empty arguments")
        if self.timeout_s <= 0 or self.max_output_bytes <= 0:
            raise ValueError("timeout_s and max_output_bytes must be positive")
        _check_env_names(self.pass_env)

    def environment(self) -> dict[str, str]:
        """What the command runs with: MINIMAL_ENV and `pass_env`, where the caller has them."""
        if self.env is not None:
            return dict(self.env)
        return {name: os.environ[name] for name in (*MINIMAL_ENV, *self.pass_env) if name in os.environ}

    def exchange(self, request: bytes) -> Exchange:
        request_sha = _sha256(request)
        shown = " ".join(self.argv)
        started = time.monotonic()
        try:
            process = subprocess.Popen(
                list(self.argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env=self.environment(), cwd=self.cwd,
                start_new_session=True, close_fds=True,
            )
        except OSError as exc:
            raise ModelStartError(f"could not start model command {shown!r}: {exc.strerror or exc}",
                                  request_sha256=request_sha) from exc
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        out, err = _Sink(cap=self.max_output_bytes), _Sink(tail=STDERR_TAIL)
        threads = [threading.Thread(target=_feed, args=(process.stdin, request), daemon=True),
                   threading.Thread(target=_drain, args=(process.stdout, out), daemon=True),
                   threading.Thread(target=_drain, args=(process.stderr, err), daemon=True)]
        for thread in threads:
            thread.start()
        deadline = started + self.timeout_s
        delay = 0.002
        outcome: Literal["exited", "timeout", "overflow"] = "exited"
        while not _exited(process.pid):
            if out.overflow.is_set():
                outcome = "overflow"
                break
            if time.monotonic() >= deadline:
                outcome = "timeout"
                break
            time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
            delay = min(delay * 2, 0.05)
        _kill_group(process.pid)
        returncode = process.wait()
        drained_by = time.monotonic() + _DRAIN_S  # one budget for all pipes, not one each
        for thread in threads:
            thread.join(max(0.0, drained_by - time.monotonic()))
        duration = time.monotonic() - started
        stderr_tail = _tail_text(bytes(err.data))
        if out.overflow.is_set():
            outcome = "overflow"
        if outcome == "timeout":
            raise ModelTimeoutError(f"model command {shown!r} ran past its timeout of {self.timeout_s:g} s and was "
                                    "killed",
                               request_sha256=request_sha, timeout_s=self.timeout_s, stderr_tail=stderr_tail)
        if outcome == "overflow":
            raise ModelOutputTooLargeError(f"model command {shown!r} wrote more than {self.max_output_bytes} bytes "
                                      "to stdout and was killed", request_sha256=request_sha)
        if returncode != 0:
            status = f"was killed by signal {-returncode}" if returncode < 0 else f"exited with status {returncode}"
            raise ModelExitError(f"model command {shown!r} {status} after {duration:.1f} s",
                                 request_sha256=request_sha, returncode=returncode,
                                 stderr_tail=stderr_tail, sealed_headline=f"model command {shown!r} failed")
        return Exchange(answer=bytes(out.data), duration_s=duration, detail=shown)


# --- the recorded backend -----------------------------------------------------------------


def recording_path(folder: Path, request: bytes) -> Path:
    return folder / f"{_sha256(request)}.json"


@dataclass(frozen=True)
class RecordedBackend:
    """Replay answers from `<folder>/<sha256 of the canonical request>.json`."""

    folder: Path
    name: BackendName = field(default="recorded", init=False)

    def exchange(self, request: bytes) -> Exchange:
        path = recording_path(self.folder, request)
        try:
            answer = path.read_bytes()
        except FileNotFoundError as exc:
            raise RecordingMissingError(
                f"no recorded answer for request {_sha256(request)} in {self.folder}: record one at {path.name} "
                "(verifier.model.adapter.record_answer) or configure the command backend",
                request_sha256=_sha256(request),
            ) from exc
        return Exchange(answer=answer, duration_s=0.0, detail=str(path))


def record_answer(folder: Path, request: BaseModel, answer: bytes) -> Path:
    """Store `answer` as the recorded reply to `request` (for fixtures and the demo)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = recording_path(folder, request_bytes(request))
    path.write_bytes(answer)
    return path


@dataclass(frozen=True)
class RecordingBackend:
    """Pass calls to `inner` and keep each answer in `folder`, to build recordings from live calls.

    Its replies are live (backend "command"); only a RecordedBackend over the folder replays them.
    """

    inner: CommandBackend
    folder: Path
    name: BackendName = field(default="command", init=False)

    def exchange(self, request: bytes) -> Exchange:
        exchange = self.inner.exchange(request)
        self.folder.mkdir(parents=True, exist_ok=True)
        recording_path(self.folder, request).write_bytes(exchange.answer)
        return exchange


# --- configuration ------------------------------------------------------------------------


KEY_FIELDS = frozenset({"api_key", "apikey", "key", "token", "secret", "auth_token"})
URL_RE = r"^https?://[^\s]{1,500}$"


class ModelConfig(Strict):
    """One `model` block of config.json: which backend answers, and how it is reached.

    `command` and `recorded` as before; `anthropic` and `openai` name the provider's model in
    `name`, and may point `base_url` at another endpoint (an OpenAI-compatible local server such as
    vLLM or llama.cpp's). Their API key is never here: `api_key_env` names the environment
    variable that holds it (default ANTHROPIC_API_KEY / OPENAI_API_KEY), or `api_key_file` a file
    of the caller's own with mode 0600 (relative paths from the home). `prices` adds to or
    overrides the price table (verifier/model/prices.py) by model name.
    """

    backend: BackendName
    command: list[Annotated[str, StringConstraints(min_length=1)]] = Field(default_factory=list)
    timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0, le=24 * 3600)
    max_output_bytes: int = Field(default=DEFAULT_MAX_OUTPUT, gt=0, le=64 << 20)
    recordings: str | None = None
    # Variables of the caller's environment the command also gets (its own credentials, say),
    # beyond MINIMAL_ENV. RW_TOKEN is never passed.
    pass_env: list[Annotated[str, StringConstraints(pattern=ENV_NAME_RE)]] = Field(default_factory=list,
                                                                                   max_length=64)
    name: Annotated[str, StringConstraints(pattern=MODEL_NAME_RE)] | None = None
    base_url: Annotated[str, StringConstraints(pattern=URL_RE)] | None = None
    api_key_env: Annotated[str, StringConstraints(pattern=ENV_NAME_RE)] | None = None
    api_key_file: Annotated[str, StringConstraints(min_length=1, max_length=1000)] | None = None
    retries: int = Field(default=MODEL_RETRIES, ge=0, le=10)
    backoff_s: float = Field(default=MODEL_BACKOFF_S, ge=0, le=300)
    backoff_max_s: float = Field(default=MODEL_BACKOFF_MAX_S, ge=0, le=600)
    max_tokens: int = Field(default=MODEL_MAX_TOKENS, gt=0, le=200_000)
    prices: dict[Annotated[str, StringConstraints(pattern=MODEL_NAME_RE)], Price] = Field(default_factory=dict,
                                                                                         max_length=200)
    # A recorded backend may seal baselines only when it says so: the tests' and the demo's
    # fixtures. A steward's baseline is a live frontier call (verifier.writes.baseline.model_backend).
    sealed_replay: bool = False

    @model_validator(mode="before")
    @classmethod
    def _no_key_here(cls, value: object) -> object:
        # Said before any other check, and without the value: pydantic's own errors quote the input.
        if isinstance(value, dict) and (found := sorted(KEY_FIELDS & {str(k).lower() for k in value})):
            raise ValueError(f"a model block may not hold a credential ({', '.join(found)}): put the API key in the "
                             "environment variable `api_key_env` names, or a 0600 file `api_key_file` names "
                             "(docs/models.md)")
        return value

    @model_validator(mode="after")
    def _complete(self) -> ModelConfig:
        _check_env_names(tuple(self.pass_env))
        if self.backend == "command" and not self.command:
            raise ValueError('backend "command" needs `command`, an argument list such as ["my-model", "--json"]')
        if self.backend == "recorded" and not self.recordings:
            raise ValueError('backend "recorded" needs `recordings`, the folder of recorded answers')
        if self.backend in ("anthropic", "openai") and not self.name:
            raise ValueError(f'backend "{self.backend}" needs `name`, the provider\'s model name '
                             '(such as "claude-sonnet-4-5" or "gpt-4.1")')
        if self.api_key_env is not None and self.api_key_file is not None:
            raise ValueError("name either `api_key_env` or `api_key_file`, not both")
        return self

    def describe(self) -> str:
        """What answers, in a few words (for `rw model check` and errors): never a credential."""
        if self.backend in ("anthropic", "openai"):
            return f"{self.backend} {self.name}" + (f" at {self.base_url}" if self.base_url else "")
        if self.backend == "recorded":
            return f"recorded answers in {self.recordings}"
        return f"command {' '.join(self.command)!r}"


def _check_env_names(names: tuple[str, ...]) -> None:
    for name in names:
        if not re.match(ENV_NAME_RE, name):
            raise ValueError(f"pass_env: {name!r} is not an environment variable name")
        if name in NEVER_PASSED:
            raise ValueError(f"pass_env: {name} is never passed to a model command (a person's bearer token)")


def backend_from_config(config: ModelConfig, *, base: Path, env: Mapping[str, str] | None = None) -> Backend:
    """The backend `config` describes; a relative `recordings` folder or key file is taken from `base`.
    `env` replaces the caller's environment: a command's, or where a provider's key is looked up."""
    if config.backend == "recorded":
        assert config.recordings is not None
        return RecordedBackend(base / config.recordings)
    if config.backend in ("anthropic", "openai"):
        assert config.name is not None
        settings = ProviderSettings(
            provider=config.backend, model=config.name, base_url=config.base_url, timeout_s=config.timeout_s,
            retries=config.retries, backoff_s=config.backoff_s, backoff_max_s=config.backoff_max_s,
            max_tokens=config.max_tokens,
            api_key_env=config.api_key_env or (None if config.api_key_file else DEFAULT_KEY_ENV[config.backend]),
            api_key_file=base / config.api_key_file if config.api_key_file else None, prices=dict(config.prices))
        return ProviderBackend(settings, env=env)
    return CommandBackend(tuple(config.command), timeout_s=config.timeout_s,
                          max_output_bytes=config.max_output_bytes, env=env, pass_env=tuple(config.pass_env))

