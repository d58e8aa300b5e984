"""What the platform worker says to its model and what it must answer: strict request and answer models. Pure.

Two kinds of call, one per leaf kind the worker does (docs/models.md):

- `extract`: the leaf's skill section, the payload and the source's derived text in; findings out,
  each an exact excerpt of that text with a statement and a limitation. A follow-up call of the
  same kind carries `retry`: the findings whose excerpts were not found, and why; it is answered
  with replacements for those findings only.
- `scout`: the gap, the pinned source's URL and the start of its text in; the source record's
  metadata out (title, date, language, rights).

Requests travel as canonical JSON like every model call (verifier/model/schema.py): one request,
one sha256, one recorded answer.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from verifier.constants import WORKER_MAX_FINDINGS
from verifier.formats.base import Strict
from verifier.model.schema import AnswerBase

EXTRACT_INSTRUCTIONS = (
    "You are a ResearchWiki worker doing one extract leaf. Follow the skill section given. Read the source "
    "text and write findings: each excerpt must be copied exactly, character for character, from the source "
    "text (never retyped, shortened inside or tidied); the statement says in your words what the excerpt "
    "shows; the limitation says what it does not show. When `retry` is not empty, answer with replacements "
    "for exactly those findings, fixing what each problem names. Answer with one JSON object: "
    '{"kind": "extract", "findings": [{"excerpt": "...", "statement": "...", "limitation": "..."}], '
    '"model": "<your model name>"}.'
)
SCOUT_INSTRUCTIONS = (
    "You are a ResearchWiki worker doing one scout leaf. The source at `url` was fetched for the gap given; "
    "its text begins as shown. Describe the source for its record. Answer with one JSON object: "
    '{"kind": "scout", "title": "...", "published": "YYYY-MM-DD" | null, "language": "en", '
    '"rights": "public", "model": "<your model name>"}.'
)
SOURCE_TEXT_MAX = 400_000  # characters of derived text sent; a longer source is cut, and the request says so
SCOUT_TEXT_MAX = 20_000
Short = Annotated[str, StringConstraints(min_length=1, max_length=4000)]


class Retry(Strict):
    """A finding the worker could not use, and why."""

    excerpt: str
    problem: str


class ExtractRequest(Strict):
    kind: Literal["extract"] = "extract"
    version: Literal[1] = 1
    instructions: str = EXTRACT_INSTRUCTIONS
    skill: str  # the skill's extract section
    project: str
    leaf_id: str
    source_id: str
    source_text: str
    truncated: bool = False
    max_findings: int = WORKER_MAX_FINDINGS
    retry: list[Retry] = Field(default_factory=list)


class Finding(Strict):
    excerpt: Annotated[str, StringConstraints(min_length=1, max_length=2000)]
    statement: Short
    limitation: Short


class ExtractAnswer(AnswerBase):
    kind: Literal["extract"]
    findings: list[Finding] = Field(max_length=WORKER_MAX_FINDINGS)


class ScoutRequest(Strict):
    kind: Literal["scout"] = "scout"
    version: Literal[1] = 1
    instructions: str = SCOUT_INSTRUCTIONS
    skill: str  # the skill's scout section
    project: str
    leaf_id: str
    gap: str
    url: str
    media_type: str
    text: str


class ScoutAnswer(AnswerBase):
    kind: Literal["scout"]
    title: Annotated[str, StringConstraints(min_length=1, max_length=300)]
    published: Annotated[str, StringConstraints(pattern=r"^\d{4}-\d{2}-\d{2}$")] | None = None  # a date, YYYY-MM-DD
    language: Annotated[str, StringConstraints(pattern=r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$")]
    rights: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{1,40}$")]
