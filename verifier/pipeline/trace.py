"""Trace ingest: check a trace bundle's parts and level, scan it for secrets, identify it.

Pure: takes the bundle's files as bytes and returns a TraceRecord or raises Rejected naming the
missing or faulty part. Storing the bundle is the store's job, and happens only after this passes.

The level a leaf asks for (`asked_level`, design §3.10: L3 "requested for warm-leaf and
controlled-arm runs") is checked once the leaf is read (`check_asked_level`, step 4): an attempt on a
warm leaf, or on a leaf whose contract says `trace_level: L3` (the controlled arm's), whose bundle
meets less than L3 is refused with `trace_level`. The payload says so too
(`trace_level`), and `rw work` records at that level.
"""

from __future__ import annotations

from pydantic import ValidationError

from verifier.constants import MAX_BUNDLE_BYTES
from verifier.constants import MAX_TRACE_EVENTS as MAX_EVENTS
from verifier.errors import FormatError, Rejected, Rejection
from verifier.formats.base import validate
from verifier.formats.ids import trace_id_for
from verifier.formats.leaf import LeafContract
from verifier.formats.strictjson import loads as strict_loads
from verifier.formats.trace import BUNDLE_ORDER, REQUIRED_FILES, TraceEvent, TraceManifest, TraceRecord, bundle_digest
from verifier.secrets import scan_bytes

_LEVEL_RANK = {"L1": 1, "L2": 2, "L3": 3}


def _reject(code: str, message: str, where: str | None = None) -> Rejected:
    return Rejected(Rejection(code, message, where))


def asked_level(contract: LeafContract) -> str | None:
    """The trace level the leaf asks of every attempt: its contract's `trace_level` (the controlled
    arm's leaves say L3), at least L3 for a warm leaf, else none."""
    asked = contract.trace_level
    if contract.warm and (asked is None or _LEVEL_RANK[asked] < _LEVEL_RANK["L3"]):
        asked = "L3"
    return asked


def check_asked_level(contract: LeafContract, record: TraceRecord) -> None:
    """Refuse (`trace_level`) a bundle that meets less than the level the leaf asks for."""
    asked = asked_level(contract)
    if asked is not None and _LEVEL_RANK[record.level] < _LEVEL_RANK[asked]:
        why = "a warm leaf" if contract.warm else "its contract's trace_level"
        raise _reject("trace_level", f"leaf {contract.leaf_id} asks for an {asked} trace ({why}: design "
                      f"§3.10) and this bundle meets {record.level}; record reasoning events and the starting "
                      "context (`rw work` records at the level the leaf asks for)", "trace/manifest.json")


def _parse_manifest(data: bytes) -> TraceManifest:
    try:
        value = strict_loads(data)
    except (ValueError, RecursionError) as exc:
        raise _reject("trace_manifest", f"manifest.json is not JSON: {exc}", "trace/manifest.json") from exc
    try:
        return validate(TraceManifest, value, "trace/manifest.json")
    except FormatError as exc:
        raise _reject("trace_manifest", exc.message, exc.where) from exc


def _parse_events(data: bytes) -> list[TraceEvent]:
    events: list[TraceEvent] = []
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if len(lines) > MAX_EVENTS:
        raise _reject("trace_events", f"more than {MAX_EVENTS} events", "trace/events.jsonl")
    previous = None
    for number, line in enumerate(lines, 1):
        where = f"trace/events.jsonl:{number}"
        try:
            event = TraceEvent.model_validate(strict_loads(line))
        except (ValueError, ValidationError, RecursionError) as exc:
            detail = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)[:200]
            raise _reject("trace_events", f"not a trace event ({{ts, type, content}}): {detail}", where) from exc
        if previous is not None and event.ts < previous:
            raise _reject("trace_events", "events are out of order (ts goes backwards)", where)
        previous = event.ts
        events.append(event)
    return events


def _observed_level(events: list[TraceEvent], files: dict[str, bytes]) -> tuple[int, list[str]]:
    """The highest level met, and what the next level up is missing."""
    types = {event.type for event in events}
    l1_missing = [
        label
        for label, present in (
            ("a tool_call event", "tool_call" in types),
            ("a tool_result event", "tool_result" in types),
            ("a final event with the reasoning summary", "final" in types),
        )
        if not present
    ]
    if l1_missing:
        return 0, l1_missing
    if "reasoning" not in types:
        return 1, ["reasoning events (step-by-step reasoning)"]
    if not files.get("context.md", b"").strip():
        return 2, ["context.md (the full context given at leaf start)"]
    return 3, []


def inspect_bundle(files: dict[str, bytes], patch: bytes) -> TraceRecord:
    """Validate a trace bundle against the submitted patch; raise Rejected on the first fault."""
    unknown = sorted(set(files) - set(BUNDLE_ORDER))
    if unknown:
        raise _reject("trace_unknown_file", f"unexpected file(s) in the bundle: {', '.join(unknown)}", "trace/")
    missing = [name for name in REQUIRED_FILES if name not in files]
    if missing:
        raise _reject("trace_missing", f"the trace bundle has no {', '.join(missing)}; L1 needs all of "
                      f"{', '.join(REQUIRED_FILES)}", "trace/")
    size = sum(len(data) for data in files.values())
    if size > MAX_BUNDLE_BYTES:
        raise _reject("trace_oversize", f"the bundle is {size} bytes; the cap is {MAX_BUNDLE_BYTES} "
                      "(truncate tool results, never reasoning)", "trace/")
    if files["patch.diff"] != patch:
        raise _reject("trace_patch_mismatch", "trace/patch.diff is not byte-identical to the submitted patch",
                      "trace/patch.diff")
    manifest = _parse_manifest(files["manifest.json"])
    events = _parse_events(files["events.jsonl"])
    level, missing_parts = _observed_level(events, files)
    if level == 0:
        raise _reject("trace_below_l1", f"the trace is below L1: events.jsonl lacks {', '.join(missing_parts)}",
                      "trace/events.jsonl")
    declared = _LEVEL_RANK[manifest.level]
    if declared > level:
        raise _reject("trace_level", f"manifest.json declares {manifest.level} but the bundle lacks "
                      f"{missing_parts[0]}; add it, or declare L{level} if the leaf asks for no more (a warm "
                      "leaf asks for L3, and a contract may name its trace_level)", "trace/manifest.json")
    hits = [hit for name in BUNDLE_ORDER if name in files for hit in scan_bytes(files[name], name=name)]
    if hits:
        shown = "; ".join(f"{hit.kind} in {hit.file} at byte {hit.offset} ({hit.encoding})" for hit in hits[:5])
        more = f" and {len(hits) - 5} more" if len(hits) > 5 else ""
        raise _reject("secret_in_trace", f"secret scan found {len(hits)} secret(s): {shown}{more}; the bundle "
                      "was purged. Strip secrets before upload.", "trace/")
    digest = bundle_digest(files)
    return TraceRecord(trace_id_for(digest), digest, manifest, f"L{level}", size)
