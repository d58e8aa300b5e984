"""Trace bundles (design §3.10): manifest.json, events.jsonl and patch.diff, plus context.md at L3.

The bundle's identity is the sha256 of a canonical framing of its files, so the same bundle
has the same id whether it arrived as a folder, a tar file or an HTTP form:
for each file in BUNDLE_ORDER that is present: name, NUL, decimal length, NUL, the bytes.
"""

import hashlib
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from verifier.formats.base import CommitId, Handle, OneLine, PlainLines, Strict, Timestamp

TraceLevel = Literal["L1", "L2", "L3"]
EventType = Literal["reasoning", "tool_call", "tool_result", "final"]
BUNDLE_ORDER = ("manifest.json", "events.jsonl", "patch.diff", "context.md")
REQUIRED_FILES = ("manifest.json", "events.jsonl", "patch.diff")


class TraceManifest(Strict):
    leaf_id: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{2,63}$")]
    agent: Handle
    operator: Handle
    base_revision: CommitId
    # Printed and grouped by in rw eval: one line of plain text each.
    model: Annotated[str, StringConstraints(max_length=200), OneLine] | None = None
    skill_version: Annotated[str, StringConstraints(min_length=1, max_length=64), OneLine]
    # Claimed costs are bounded and finite: they land in the ledger and the scores as JSON.
    tokens: int | None = Field(default=None, ge=0, le=10**12)  # in + out when both are known
    # The split an agent CLI's transcript gives (agentkit.transcripts): input read (cached
    # included), output written, input served from a cache. Optional, like every disclosure.
    tokens_in: int | None = Field(default=None, ge=0, le=10**12)
    tokens_out: int | None = Field(default=None, ge=0, le=10**12)
    tokens_cached: int | None = Field(default=None, ge=0, le=10**12)
    usd: float | None = Field(default=None, ge=0, le=10**6, allow_inf_nan=False)
    duration_s: float | None = Field(default=None, ge=0, le=10**7, allow_inf_nan=False)
    level: TraceLevel
    summary: Annotated[str, StringConstraints(max_length=2000), PlainLines] | None = None


class TraceEvent(Strict):
    ts: Timestamp
    type: EventType
    # Any string (empty, or long: reasoning is never truncated; the bundle cap bounds it) or object.
    content: str | dict[str, object]


def bundle_digest(files: dict[str, bytes]) -> str:
    """sha256 over the canonical framing of the bundle's files (see module docstring)."""
    digest = hashlib.sha256()
    for name in BUNDLE_ORDER:
        if name in files:
            data = files[name]
            digest.update(name.encode() + b"\x00" + str(len(data)).encode() + b"\x00")
            digest.update(data)
    return digest.hexdigest()


@dataclass(frozen=True)
class TraceRecord:
    trace_id: str
    digest: str  # full sha256 of the canonical bundle framing
    manifest: TraceManifest
    level: str  # the level the bundle actually meets
    size: int
