"""The agent's trace recorder (design §3.10): events appended as the agent works, secrets stripped
before anything is written, tool output truncated so the bundle stays under the 20 MB cap, and the
bundle built at submit time with the manifest the verifier expects.

- Levels: L1 (tool calls, tool results and a final summary), L2 (adds reasoning; the default), L3
  (adds context.md, the full context the agent started with). The operator may opt down to L1:
  then reasoning events are not recorded at all.
- Secrets are found by the verifier's own scanner (`verifier.secrets.scan_bytes`) and replaced by
  `[secret stripped: <detector>]`, so the marker says what was there and never the value; the
  manifest's fields (the summary above all) are stripped the same way when the bundle is built.
- Truncation only ever shortens tool_call and tool_result contents, largest first; reasoning and
  the final summary are never cut (the cap is the verifier's; reasoning is what a reviewer reads).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verifier.agentkit.safefiles import exists, open_read, read_bytes, write_bytes
from verifier.constants import MAX_BUNDLE_BYTES, MAX_TOOL_EVENT_CHARS

if TYPE_CHECKING:
    from verifier.secrets import SecretHit

# verifier.secrets.keywords.KIND, written out: importing the scanner costs a command its start-up.
KEYWORD_KIND = "Secret Keyword"

LEVELS = ("L1", "L2", "L3")
EVENT_TYPES = ("reasoning", "tool_call", "tool_result", "final")
TRUNCATABLE = frozenset({"tool_call", "tool_result"})
BUNDLE_BUDGET = MAX_BUNDLE_BYTES - 512 * 1024  # room for the manifest and the framing
_TOKEN_END = frozenset(b" \t\r\n\"'<>,;()[]{}`|")
_MAX_ROUNDS = 8


def marker(kind: str) -> str:
    return f"[secret stripped: {kind}]"


def _secret_end(data: bytes, start: int) -> int:
    """Where the secret that starts at `start` ends: a PEM block to its END line, else a token run."""
    if data.startswith(b"-----BEGIN", start):
        close = data.find(b"-----END", start)
        if close != -1:
            tail = data.find(b"-----", close + 8)
            return tail + 5 if tail != -1 else len(data)
    end = start
    while end < len(data) and data[end] not in _TOKEN_END:
        end += 1
    return max(end, start + 1)


def _spans(data: bytes, hits: list[SecretHit]) -> list[tuple[int, int, list[str]]]:
    """Each secret's byte span on the unmodified text, overlapping spans merged (two detectors
    often see one secret: a key's own pattern and the keyword it is assigned to)."""
    merged: list[tuple[int, int, list[str]]] = []
    for start, end, kind in sorted((h.offset, _secret_end(data, h.offset), h.kind) for h in hits
                                   if h.offset < len(data)):
        if merged and start < merged[-1][1]:
            first, last, kinds = merged[-1]
            merged[-1] = (first, max(last, end), [*kinds, kind])
        else:
            merged.append((start, end, [kind]))
    return merged


def _named(kinds: list[str]) -> str:
    """The marker's name: the most specific detector (a key's own pattern over the keyword one)."""
    specific = [kind for kind in kinds if kind != KEYWORD_KIND]
    return (specific or kinds)[0]


def strip_secrets(text: str) -> tuple[str, list[str]]:
    """`text` with every secret the verifier's scanner finds replaced by a marker naming the detector."""
    # Imported on first use: the scanner's detectors take longer to load than the rest of a
    # command, and rw's own records (`TraceLog.add_own`) never need them.
    from verifier.secrets import scan_bytes  # noqa: PLC0415

    found: list[str] = []
    data = text.encode("utf-8")
    for _ in range(_MAX_ROUNDS):
        hits = scan_bytes(data, name="text")
        if not hits:
            return data.decode("utf-8", "replace"), found
        for start, end, kinds in reversed(_spans(data, hits)):
            data = data[:start] + marker(_named(kinds)).encode() + data[end:]
            found.extend(kinds)
    # Something the spans above did not cover (an encoding inside an encoding): drop it whole.
    kinds = sorted({hit.kind for hit in scan_bytes(data, name="text")}) or ["unknown"]
    found.extend(kinds)
    return marker(", ".join(kinds)), found


def strip_value(value: Any, found: list[str]) -> Any:
    """Strip every string inside an event's content (strings, dict values and keys, lists)."""
    if isinstance(value, str):
        clean, kinds = strip_secrets(value)
        found.extend(kinds)
        return clean
    if isinstance(value, dict):
        return {strip_value(str(key), found): strip_value(item, found) for key, item in value.items()}
    if isinstance(value, list):
        return [strip_value(item, found) for item in value]
    return value


def clean_manifest(manifest: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The manifest with every string field (summary, handles, ids, anything) stripped of secrets
    as the events are, and the detectors that fired: a secret in `rw submit --summary` is never sent."""
    found: list[str] = []
    clean: dict[str, Any] = strip_value(manifest, found)
    return clean, found


def truncate_text(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    note = f"\n[truncated by rw: {len(text) - limit} of {len(text)} characters left out]"
    return text[: max(0, limit - len(note))] + note


def truncate_content(content: Any, limit: int) -> Any:
    """A tool event's content cut to about `limit` characters of JSON."""
    if isinstance(content, str):
        return truncate_text(content, limit)
    rendered = json.dumps(content, ensure_ascii=False, sort_keys=True)
    if len(rendered) <= limit:
        return content
    return {"truncated": True, "original_chars": len(rendered), "head": truncate_text(rendered, limit)}


def _instant(ts: str) -> datetime:
    try:
        moment = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValueError(f"event time {ts!r} is not ISO 8601") from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def event_line(event: dict[str, Any]) -> bytes:
    return json.dumps(event, sort_keys=True, ensure_ascii=False).encode("utf-8") + b"\n"


@dataclass(frozen=True)
class Recorded:
    event: dict[str, Any] | None  # None when the level does not record this type
    stripped: list[str]


def prepare_event(ts: str, kind: str, content: Any, level: str) -> Recorded:
    """One event as it will be stored: dropped below its level, stripped, tool output truncated."""
    if kind not in EVENT_TYPES:
        raise ValueError(f"event type {kind!r}: expected one of {', '.join(EVENT_TYPES)}")
    if level not in LEVELS:
        raise ValueError(f"trace level {level!r}: expected one of {', '.join(LEVELS)}")
    if kind == "reasoning" and level == "L1":
        return Recorded(None, [])
    found: list[str] = []
    # Cut first, then strip: scanning 50 MB of tool output to keep 2 MB of it would be waste.
    if kind in TRUNCATABLE:
        content = truncate_content(content, MAX_TOOL_EVENT_CHARS)
    clean = strip_value(content, found)
    return Recorded({"ts": ts, "type": kind, "content": clean}, found)


def fit_budget(lines: list[bytes], budget: int = BUNDLE_BUDGET) -> list[bytes]:
    """Events cut to fit `budget` bytes, shortening only tool events, the largest first."""
    total = sum(len(line) for line in lines)
    if total <= budget:
        return lines
    out = list(lines)
    order = sorted(range(len(out)), key=lambda i: len(out[i]), reverse=True)
    for index in order:
        if total <= budget:
            break
        event = json.loads(out[index])
        if event.get("type") not in TRUNCATABLE:
            continue
        excess = total - budget
        keep = max(1024, len(out[index]) - excess - 256)
        event["content"] = truncate_content(event["content"], keep // 4)  # chars may be 4 bytes
        shorter = event_line(event)
        total -= len(out[index]) - len(shorter)
        out[index] = shorter
    return out


class TraceLog:
    """The events file of a working folder (`.rw/trace/events.jsonl`), appended one event at a time.

    With `root` (the working folder), every file is reached from it without following a link
    (`safefiles`), so a planted `.rw -> elsewhere` is refused instead of written or read through."""

    def __init__(self, folder: Path, level: str = "L2", *, root: Path | None = None) -> None:
        self.folder = folder
        self.level = level
        self.events = folder / "events.jsonl"
        self.context = folder / "context.md"
        self.root = folder if root is None else root
        self._prefix = "" if root is None else folder.relative_to(root).as_posix() + "/"

    def _has(self, name: str) -> bool:
        return self.root.is_dir() and exists(self.root, self._prefix + name)

    def _read(self, name: str) -> bytes:
        return read_bytes(self.root, self._prefix + name)

    def _write(self, name: str, data: bytes, *, append: bool) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        write_bytes(self.root, self._prefix + name, data, append=append)

    def _last_ts(self) -> str | None:
        if not self._has("events.jsonl"):
            return None
        with open_read(self.root, self._prefix + "events.jsonl") as events:
            size = events.seek(0, 2)
            events.seek(max(0, size - 64 * 1024))
            lines = [line for line in events.read().splitlines() if line.strip()]
        try:
            return str(json.loads(lines[-1])["ts"]) if lines else None
        except (ValueError, KeyError):
            return None

    def add(self, ts: str, kind: str, content: Any) -> Recorded:
        """Append one event; a time earlier than the last event's is raised to it (the verifier
        refuses a trace whose times go backwards, and clocks and imported events disagree)."""
        last = self._last_ts()
        if last is not None and _instant(ts) < _instant(last):
            ts = last
        recorded = prepare_event(ts, kind, content, self.level)
        if recorded.event is not None:
            self._write("events.jsonl", event_line(recorded.event), append=True)
        return recorded

    def add_many(self, ts: str, events: Iterable[tuple[str, Any]]) -> list[Recorded]:
        """Append (type, content) events, all at `ts` (raised to the last event's time, as `add`
        does), prepared first and written in one append: a bad event leaves nothing half added.
        An imported transcript comes this way (its lines carry no times of their own)."""
        last = self._last_ts()
        if last is not None and _instant(ts) < _instant(last):
            ts = last
        recorded = [prepare_event(ts, kind, content, self.level) for kind, content in events]
        data = b"".join(event_line(r.event) for r in recorded if r.event is not None)
        if data:
            self._write("events.jsonl", data, append=True)
        return recorded

    def add_own(self, ts: str, kind: str, content: dict[str, str]) -> None:
        """A record `rw` makes of its own command: the command's name and the ids and paths it
        wrote, never text the agent passed in, so there is nothing to strip."""
        last = self._last_ts()
        if last is not None and _instant(ts) < _instant(last):
            ts = last
        self._write("events.jsonl", event_line({"ts": ts, "type": kind, "content": content}), append=True)

    def add_lines(self, lines: Iterable[str]) -> int:
        """Append events given as JSON lines ({ts, type, content}); returns how many were recorded."""
        count = 0
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                event = json.loads(line)
                recorded = self.add(str(event["ts"]), str(event["type"]), event["content"])
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"event line {number}: {exc}") from exc
            count += recorded.event is not None
        return count

    def set_context(self, text: str) -> list[str]:
        clean, found = strip_secrets(text)
        self._write("context.md", clean.encode("utf-8"), append=False)
        return found

    def has_final(self) -> bool:
        return self._has("events.jsonl") and any(json.loads(line).get("type") == "final"
                                                 for line in self._read("events.jsonl").splitlines() if line.strip())

    def bundle(self, manifest: dict[str, Any], patch: bytes, *,
               final: tuple[str, str] | None = None) -> dict[str, bytes]:
        """The bundle's files: manifest, events cut to the cap, the patch, context.md at L3.

        `final` (ts, text) is the final event to end the events with when none was recorded.
        Every manifest field is stripped of secrets like the events (`clean_manifest`).
        """
        raw = self._read("events.jsonl") if self._has("events.jsonl") else b""
        if final is not None and not self.has_final():
            raw += event_line(prepare_event(final[0], "final", final[1], self.level).event or {})
        context = self._read("context.md") if self.level == "L3" and self._has("context.md") else None
        fixed = len(patch) + (len(context) if context else 0) + 4096
        lines = fit_budget(raw.splitlines(keepends=True), BUNDLE_BUDGET - fixed)
        clean, _found = clean_manifest({**manifest, "level": self.level})
        files = {"manifest.json": json.dumps(clean, indent=2, sort_keys=True).encode()
                 + b"\n", "events.jsonl": b"".join(lines), "patch.diff": patch}
        if context is not None:
            files["context.md"] = context
        return files
