"""The shared result of every transcript parser, and the line reader they share. Pure.

A transcript is JSON lines. Every line must be a JSON object with a string `type`; a line that
is not is refused with its number (`TranscriptError`), except the last non-empty line, which an
agent CLI killed mid-write leaves cut short: that one is left out and reported
(`ImportedTranscript.truncated_line`), never an error.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

# JSON values as the parsers see them (objects, lists, strings, numbers, booleans, null).
JsonValue = object
JsonObject = Mapping[str, object]
EventContent = str | dict[str, object]

MAX_TOKENS = 10**12  # the manifest's bound (formats.trace)
MAX_USD = 10.0**6
MAX_DURATION_S = 10.0**7


_T = TypeVar("_T")


def pick(mine: _T | None, theirs: _T | None) -> _T | None:
    """`mine` when known, else `theirs`."""
    return theirs if mine is None else mine


class TranscriptError(ValueError):
    """A transcript line that is not what its format says: `line` is its 1-based number."""

    def __init__(self, line: int, why: str) -> None:
        super().__init__(f"line {line}: {why}")
        self.line = line
        self.why = why


@dataclass(frozen=True)
class Disclosure:
    """What an agent run cost, as far as it was disclosed: None is "not disclosed", never zero.

    tokens_in counts every input token the model read (cached ones included), tokens_cached
    those of them served from a cache, tokens_out the tokens it wrote; `total_tokens` is in + out.
    """

    model: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    tokens_cached: int | None = None
    usd: float | None = None
    duration_s: float | None = None
    tokens: int | None = None  # a total given on its own (`rw trace meta --tokens`), without in/out

    @property
    def total_tokens(self) -> int | None:
        if self.tokens is not None:
            return self.tokens
        if self.tokens_in is None and self.tokens_out is None:
            return None
        return (self.tokens_in or 0) + (self.tokens_out or 0)

    def over(self, base: Disclosure) -> Disclosure:
        """This disclosure's known fields laid over `base`'s (a later import or flag wins)."""
        breakdown = self.tokens_in is not None or self.tokens_out is not None
        return Disclosure(model=pick(self.model, base.model), tokens_in=pick(self.tokens_in, base.tokens_in),
                          tokens_out=pick(self.tokens_out, base.tokens_out),
                          tokens_cached=pick(self.tokens_cached, base.tokens_cached), usd=pick(self.usd, base.usd),
                          duration_s=pick(self.duration_s, base.duration_s),
                          # a breakdown replaces an older bare total
                          tokens=self.tokens if self.tokens is not None or breakdown else base.tokens)

    def to_json(self) -> dict[str, str | int | float | None]:
        return {"model": self.model, "tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
                "tokens_cached": self.tokens_cached, "usd": self.usd, "duration_s": self.duration_s,
                "tokens": self.tokens}

    def manifest_fields(self) -> dict[str, str | int | float]:
        """The trace manifest's disclosure fields (formats.trace.TraceManifest), the unknown left out."""
        fields: dict[str, str | int | float | None] = {
            "model": self.model, "tokens": self.total_tokens, "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out, "tokens_cached": self.tokens_cached, "usd": self.usd,
            "duration_s": self.duration_s}
        return {name: value for name, value in fields.items() if value is not None}


@dataclass(frozen=True)
class ImportedEvent:
    """One trace event (formats.trace.EventType) read from a transcript line, before it is
    stripped of secrets and cut to size (agentkit.tracing does both as it records it)."""

    type: str  # reasoning | tool_call | tool_result | final
    content: EventContent
    line: int  # the transcript line it came from


@dataclass(frozen=True)
class ImportedTranscript:
    format: str
    events: tuple[ImportedEvent, ...]
    disclosure: Disclosure
    session_id: str | None = None
    outcome: str | None = None  # the CLI's own word for how the run ended (success, error_max_turns, failed)
    lines: int = 0  # non-empty lines read
    truncated_line: int | None = None  # the cut-short last line left out, if any
    skipped: dict[str, int] = field(default_factory=dict)  # line types left out on purpose -> count

    def summary(self) -> dict[str, object]:
        """What `rw trace import --json` prints (the events themselves go to the trace)."""
        counts: dict[str, int] = {}
        for event in self.events:
            counts[event.type] = counts.get(event.type, 0) + 1
        return {"format": self.format, "events": len(self.events), "by_type": counts,
                "disclosure": self.disclosure.to_json(), "session_id": self.session_id, "outcome": self.outcome,
                "lines": self.lines, "truncated_line": self.truncated_line,
                "skipped": dict(sorted(self.skipped.items()))}


@dataclass(frozen=True)
class Line:
    number: int
    value: JsonObject
    type: str


@dataclass
class Reading:
    """What the line reader found besides the lines: the cut-short last line."""

    lines: int = 0
    truncated_line: int | None = None


def read_lines(raw: Iterable[str], reading: Reading) -> Iterator[Line]:
    """Each non-empty line as a JSON object with its `type`; see the module docstring for the
    one line that may be cut short."""
    pending: tuple[int, str] | None = None  # a line that did not parse, waiting to see if it is the last
    for number, text in enumerate(raw, 1):
        if not text.strip():
            continue
        if pending is not None:
            raise TranscriptError(pending[0], pending[1])
        reading.lines += 1
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            pending = (number, f"not JSON ({exc.msg} at column {exc.colno})")
            continue
        except RecursionError:
            raise TranscriptError(number, "JSON nested too deeply to read") from None
        if not isinstance(value, dict):
            raise TranscriptError(number, f"expected a JSON object, found {type(value).__name__}")
        kind = value.get("type")
        if not isinstance(kind, str) or not kind:
            raise TranscriptError(number, "the object has no string `type`")
        yield Line(number, value, kind)
    if pending is not None:
        reading.truncated_line = pending[0]


# Typed readers of untrusted fields: each names the line and the field it refuses.

def obj(value: JsonValue, line: int, what: str) -> JsonObject:
    if not isinstance(value, dict):
        raise TranscriptError(line, f"`{what}` should be an object, found {type(value).__name__}")
    return value


def opt_obj(value: JsonValue, line: int, what: str) -> JsonObject | None:
    return None if value is None else obj(value, line, what)


def items(value: JsonValue, line: int, what: str) -> list[JsonValue]:
    if not isinstance(value, list):
        raise TranscriptError(line, f"`{what}` should be a list, found {type(value).__name__}")
    return value


def opt_str(value: JsonValue, line: int, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise TranscriptError(line, f"`{what}` should be a string, found {type(value).__name__}")
    return value


def count(value: JsonValue, line: int, what: str) -> int | None:
    """A token count: a whole number from 0 to 10^12, or absent."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS:
        raise TranscriptError(line, f"`{what}` should be a whole number from 0 to {MAX_TOKENS}, found {value!r}")
    return value


def amount(value: JsonValue, line: int, what: str, ceiling: float) -> float | None:
    """A cost or a duration: a finite number from 0 to `ceiling`, or absent."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or not 0 <= value <= ceiling:
        raise TranscriptError(line, f"`{what}` should be a number from 0 to {ceiling:g}, found {value!r}")
    return float(value)


def add_counts(left: int | None, right: int | None) -> int | None:
    if right is None:
        return left
    return min(MAX_TOKENS, (left or 0) + right)


def as_content(value: JsonValue) -> EventContent:
    """A JSON value as an event's content (a string or an object)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return {str(key): item for key, item in value.items()}
    return {"value": value}
