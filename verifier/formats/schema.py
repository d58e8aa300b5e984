"""The formats an agent can check its work against: `rw schema KIND` prints their JSON Schema."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from verifier.formats.document import Plan, Report
from verifier.formats.finding import Finding
from verifier.formats.hypothesis import Hypothesis
from verifier.formats.leaf import LeafContract
from verifier.formats.ledger import LedgerRow
from verifier.formats.link import CounterEvidenceNote, Link
from verifier.formats.project import ProjectFile
from verifier.formats.review import Review
from verifier.formats.source import SourceRecord
from verifier.formats.trace import TraceEvent, TraceManifest

MODELS: dict[str, type[BaseModel]] = {
    "project": ProjectFile,
    "hypothesis": Hypothesis,
    "source": SourceRecord,
    "finding": Finding,
    "leaf": LeafContract,
    "ledger-row": LedgerRow,
    "trace-manifest": TraceManifest,
    "trace-event": TraceEvent,
    # What agents and people write besides findings and sources (plans and reports: front matter).
    "link": Link,
    "note": CounterEvidenceNote,
    "review": Review,
    "plan": Plan,
    "report": Report,
}


def schema_of(kind: str) -> dict[str, Any]:
    model = MODELS[kind]
    schema = model.model_json_schema()
    schema["$id"] = f"https://researchwiki.invalid/schema/{kind}.json"
    return schema
