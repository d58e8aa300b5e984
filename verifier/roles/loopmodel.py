"""What the improvement loop says to a frontier model and what it must answer.

Two calls: `diagnose` (the maintainer: one failure group's facts in, a root cause and advice out)
and `propose` (the proposer: the ops wiki's index, skill impact, the outcome summary, the pages it
opened and the skill's sections in, one section's new body out). They go through the same backends
as every model call (verifier/model/adapter.py: a configured command, or recorded answers keyed by
the sha256 of the canonical request), and are parsed just as strictly.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Annotated, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from verifier.formats.base import Strict
from verifier.formats.skill import SKILL_KINDS
from verifier.model.adapter import Backend, ModelAnswerInvalidError, ModelNotJSONError, recording_path
from verifier.model.schema import MODEL_NAME_RE

DIAGNOSE_INSTRUCTIONS = (
    "You are the Wiki Maintainer of ResearchWiki. Below is one group of agent submissions of one leaf kind "
    "that the verifier refused for the same reason, with what accepted leaves of that kind did differently and "
    "the last events of the newest failing trace (one JSON event per line: the tool calls and their results). "
    'Answer with one JSON object: {"kind": "diagnose", "root_cause": "<why these leaves failed>", '
    '"advice": "<what an agent should do instead>", "model": "<your model name>"}.'
)
PROPOSE_INSTRUCTIONS = (
    "You are the Skill Proposer of ResearchWiki. Read the pattern index, the skill-impact record, the outcome "
    "summary and the pattern pages, then propose exactly one atomic change: the new body of ONE leaf kind's "
    "section of the skill. Answer with one JSON object: "
    '{"kind": "propose", "section": "<leaf kind>", "body": "<the whole new section body, Markdown>", '
    '"rationale": "<which pattern pages this answers>", "model": "<your model name>"}.'
)
Text = Annotated[str, StringConstraints(max_length=200_000)]


class DiagnoseRequest(Strict):
    kind: Literal["diagnose"] = "diagnose"
    version: Literal[1] = 1
    instructions: str = DIAGNOSE_INSTRUCTIONS
    leaf_kind: str
    reason_code: str
    failing_step: str
    verifier_said: list[str]
    contrast: list[str]
    evidence: list[str]
    # The newest failing trace's last events (patterns.bounded_events: DIAGNOSE_EVENTS_MAX of them,
    # each at most DIAGNOSE_EVENT_CHARS); stored traces passed the secret scan at ingest.
    events: list[str] = Field(default_factory=list)


class ProposeRequest(Strict):
    kind: Literal["propose"] = "propose"
    version: Literal[1] = 1
    instructions: str = PROPOSE_INSTRUCTIONS
    index: Text
    skill_impact: Text
    outcome_summary: dict[str, dict[str, int]]
    pages: dict[str, Text]
    traces: dict[str, Text]  # events of a few evidence traces of the top failure page, truncated
    sections: dict[str, Text]


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    model: Annotated[str, StringConstraints(pattern=MODEL_NAME_RE)] | None = None


class DiagnoseAnswer(_Answer):
    kind: Literal["diagnose"]
    root_cause: Annotated[str, StringConstraints(min_length=1, max_length=4000)]
    advice: Annotated[str, StringConstraints(min_length=1, max_length=4000)]


class ProposeAnswer(_Answer):
    kind: Literal["propose"]
    section: Literal[SKILL_KINDS]  # type: ignore[valid-type]  # the tuple of kinds, as a Literal
    body: Annotated[str, StringConstraints(min_length=1, max_length=50_000)]
    rationale: Annotated[str, StringConstraints(max_length=4000)] = ""


LoopRequest = DiagnoseRequest | ProposeRequest
L = TypeVar("L", DiagnoseAnswer, ProposeAnswer)


def request_bytes(request: LoopRequest) -> bytes:
    return json.dumps(request.model_dump(mode="json"), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode("utf-8")


def ask_loop(backend: Backend, request: LoopRequest, answer: type[L]) -> tuple[L, str]:
    """Send `request`, parse the answer strictly; returns (answer, the model name to record)."""
    data = request_bytes(request)
    exchange = backend.exchange(data)
    request_sha = hashlib.sha256(data).hexdigest()
    answer_sha = hashlib.sha256(exchange.answer).hexdigest()
    where = f"{backend.name} backend ({exchange.detail})"
    try:
        value = json.loads(exchange.answer.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ModelNotJSONError(f"{where}: the answer is not JSON ({exc})", request_sha256=request_sha,
                                answer_sha256=answer_sha, detail=repr(exchange.answer[:120])) from exc
    try:
        parsed = answer.model_validate(value)
    except ValidationError as exc:
        raise ModelAnswerInvalidError(f"{where}: not a {answer.__name__}: {exc.errors()[0]['msg']}",
                                      request_sha256=request_sha, answer_sha256=answer_sha,
                                      detail=str(exc)[:400]) from exc
    name = parsed.model or "unknown"
    return parsed, (f"recorded:{name}" if backend.name == "recorded" else name)


def record_loop_answer(folder: Path, request: LoopRequest, answer: dict[str, object]) -> Path:
    """Store `answer` as the recorded reply to `request` (tests, demos)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = recording_path(folder, request_bytes(request))
    path.write_bytes(json.dumps(answer).encode())
    return path
