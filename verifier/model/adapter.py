"""Every frontier-model call goes through here: a configured command, or recorded answers.

A backend is bytes in, bytes out: it receives the canonical request JSON and returns the answer
bytes. `ask` does the rest the same way for every backend: it hashes the request and the answer
bytes as sent and received, parses the answer strictly against the request's kind, and returns a
ModelReply that says which backend answered.

- CommandBackend runs an argument list (never a shell string) in its own process group, writes the
  request to stdin, reads the answer from stdout, caps the output, and kills the whole group on
  timeout, on overflow and when the command exits, so nothing it started outlives the call. It
  gets a minimal environment (`MINIMAL_ENV`, plus the variables the config names in `pass_env`),
  never the caller's: a person's RW_TOKEN is in the environment of the edit that triggers a call.
- RecordedBackend replays answers from `<folder>/<request sha256>.json`, for the demo and the
  tests. Its replies carry backend "recorded", a model name prefixed "recorded:" and a rationale
  prefixed "[recorded answer]", so wherever its output lands, it says it was not a live call.

An answer is untrusted text. For a baseline call (sealed until resolution) an error says only
what kind of problem the answer had, never a part of it, not even a field name: an unknown
field named after the verdict would otherwise reach a public ledger row.
"""

from __future__ import annotations

import contextlib
import hashlib
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

from pydantic import Field, StringConstraints, model_validator

from verifier.constants import MODEL_TIMEOUT_S as DEFAULT_TIMEOUT_S
from verifier.errors import VerifierError
from verifier.formats.base import Strict
from verifier.model.schema import (
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

BackendName = Literal["command", "recorded"]
DEFAULT_MAX_OUTPUT = 1 << 20
STDERR_TAIL = 2000  # kept on the error
MESSAGE_TAIL = 400  # shown in its message
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


WITHHELD = "details withheld: what a baseline call said stays sealed until resolution"


class ModelError(VerifierError):
    """A model call failed. `request_sha256` names the call, so a failure can be recorded too.

    `headline` says what happened; `detail` is what the model or its command said (stderr, the
    start of a malformed answer, a wrong value). For a baseline call the message carries the
    headline only (`withheld`): even a malformed answer or a stderr line can give the verdict
    away, and error messages reach ledger rows and logs.
    """

    def __init__(self, headline: str, *, request_sha256: str, detail: str = "",
                 sealed_headline: str | None = None) -> None:
        self.headline = headline
        self.detail = detail
        self.request_sha256 = request_sha256
        self.withheld = False
        # What a sealed call's message may say: the headline without anything the command chose
        # (its exit status, how long it took), which could spell a verdict as well as text can.
        self.sealed_headline = sealed_headline if sealed_headline is not None else headline
        super().__init__(f"{headline}; {detail}" if detail else headline)

    def withhold(self) -> ModelError:
        """The same error, its message without the detail (which stays on `.detail`)."""
        clone = self.__class__.__new__(self.__class__)
        clone.__dict__.update(self.__dict__)
        clone.withheld = True
        clone.args = (f"{self.sealed_headline}; {WITHHELD}",)
        return clone


class ModelStartError(ModelError):
    """The configured command could not be started (not found, not executable, bad config)."""


class ModelExitError(ModelError):
    """The command exited with a non-zero status."""

    def __init__(self, headline: str, *, request_sha256: str, returncode: int, stderr_tail: str,
                 sealed_headline: str | None = None) -> None:
        self.returncode = returncode
        self.stderr_tail = stderr_tail
        super().__init__(headline, request_sha256=request_sha256, detail=f"stderr ends: {_shown_tail(stderr_tail)}",
                         sealed_headline=sealed_headline)


class ModelTimeoutError(ModelError):
    """The command ran past its timeout; its process group was killed."""

    def __init__(self, headline: str, *, request_sha256: str, timeout_s: float, stderr_tail: str) -> None:
        self.timeout_s = timeout_s
        self.stderr_tail = stderr_tail
        super().__init__(headline, request_sha256=request_sha256, detail=f"stderr ends: {_shown_tail(stderr_tail)}")


class ModelOutputTooLargeError(ModelError):
    """The command wrote more than the output cap; its process group was killed."""


class ModelNotJSONError(ModelError):
    """The answer bytes are not a JSON document."""

    def __init__(self, headline: str, *, request_sha256: str, answer_sha256: str, detail: str) -> None:
        self.answer_sha256 = answer_sha256
        super().__init__(headline, request_sha256=request_sha256, detail=detail)


class ModelAnswerInvalidError(ModelError):
    """The answer is JSON but does not match the answer schema of the request's kind."""

    def __init__(self, headline: str, *, request_sha256: str, answer_sha256: str, detail: str) -> None:
        self.answer_sha256 = answer_sha256
        super().__init__(headline, request_sha256=request_sha256, detail=detail)


class RecordingMissingError(ModelError):
    """The recorded backend has no answer for this request."""


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Exchange:
    """What a backend returns: the answer bytes exactly as received, and how long it took."""

    answer: bytes
    duration_s: float
    detail: str  # the command that ran, or the recorded file that answered


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

    @property
    def recorded(self) -> bool:
        return self.backend == "recorded"

    @property
    def model(self) -> str:
        """The model name to record (Baseline.model, ledger rows): never blank, and marked
        `recorded:` when the answer was replayed."""
        name = self.answer.model or "unknown"
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


def _ask(backend: Backend, request: ModelRequest, model: type[A]) -> ModelReply[A]:
    try:
        return _exchange(backend, request, model)
    except ModelError as exc:
        if isinstance(request, BaselineRequest):
            raise exc.withhold() from None  # not even the traceback's cause may carry the answer
        raise


def _exchange(backend: Backend, request: ModelRequest, model: type[A]) -> ModelReply[A]:
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
                      answer_sha256=answer_sha, duration_s=exchange.duration_s, detail=exchange.detail)


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


def _shown_tail(tail: str) -> str:
    return tail if len(tail) <= MESSAGE_TAIL else "..." + tail[-MESSAGE_TAIL:]


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


def record_answer(folder: Path, request: ModelRequest, answer: bytes) -> Path:
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


class ModelConfig(Strict):
    """The `model` settings: which backend answers, and for a command, how it is run."""

    backend: BackendName
    command: list[Annotated[str, StringConstraints(min_length=1)]] = Field(default_factory=list)
    timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0, le=24 * 3600)
    max_output_bytes: int = Field(default=DEFAULT_MAX_OUTPUT, gt=0, le=64 << 20)
    recordings: str | None = None
    # Variables of the caller's environment the command also gets (its own credentials, say),
    # beyond MINIMAL_ENV. RW_TOKEN is never passed.
    pass_env: list[Annotated[str, StringConstraints(pattern=ENV_NAME_RE)]] = Field(default_factory=list,
                                                                                   max_length=64)

    @model_validator(mode="after")
    def _complete(self) -> ModelConfig:
        _check_env_names(tuple(self.pass_env))
        if self.backend == "command" and not self.command:
            raise ValueError('backend "command" needs `command`, an argument list such as ["my-model", "--json"]')
        if self.backend == "recorded" and not self.recordings:
            raise ValueError('backend "recorded" needs `recordings`, the folder of recorded answers')
        return self


def _check_env_names(names: tuple[str, ...]) -> None:
    for name in names:
        if not re.match(ENV_NAME_RE, name):
            raise ValueError(f"pass_env: {name!r} is not an environment variable name")
        if name in NEVER_PASSED:
            raise ValueError(f"pass_env: {name} is never passed to a model command (a person's bearer token)")


def backend_from_config(config: ModelConfig, *, base: Path, env: Mapping[str, str] | None = None) -> Backend:
    """The backend `config` describes; a relative `recordings` folder is taken from `base`."""
    if config.backend == "recorded":
        assert config.recordings is not None
        return RecordedBackend(base / config.recordings)
    return CommandBackend(tuple(config.command), timeout_s=config.timeout_s,
                          max_output_bytes=config.max_output_bytes, env=env, pass_env=tuple(config.pass_env))

