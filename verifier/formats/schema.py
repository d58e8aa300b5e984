"""Every format of a project's files and the verifier's records: `rw schema KIND` prints its JSON
Schema. Formats that live outside formats/ (the Resolver's records, sealed baselines) are added by
the command line (verifier.cli.project_cmds), which may import every layer."""

from __future__ import annotations

from pydantic import BaseModel

from verifier.formats.document import Plan, Report
from verifier.formats.finding import Finding
from verifier.formats.hypothesis import Hypothesis
from verifier.formats.leaf import LeafContract
from verifier.formats.ledger import LedgerRow
from verifier.formats.link import CounterEvidenceNote, Link, ScoutRequest
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
    "scout-request": ScoutRequest,
    "review": Review,
    "plan": Plan,
    "report": Report,
}


def schema_of(kind: str, models: dict[str, type[BaseModel]] = MODELS) -> dict[str, object]:
    model = models[kind]
    schema = model.model_json_schema()
    schema["$id"] = f"https://researchwiki.invalid/schema/{kind}.json"
    return schema
