"""What the platform worker says to its model and what it must answer: strict request and answer models. Pure.

Three kinds of call, one per leaf kind the worker does (docs/models.md):

- `extract`: the leaf's skill section, the payload and the source's derived text in; findings out,
  each an exact excerpt of that text with a statement and a limitation. A follow-up call of the
  same kind carries `retry`: the findings whose excerpts were not found, and why; it is answered
  with replacements for those findings only.
- `scout`: the gap, the pinned source's URL and the start of its text in; the source record's
  metadata out (title, date, language, rights).
- `link`: the hypothesis and the findings to weigh in; links out, each a finding id, a stance
  (supports, contradicts, context) and a rationale. A follow-up call carries `retry`: the links the
  verifier's link rules refused, and why; it is answered with replacements for those only.

Requests travel as canonical JSON like every model call (verifier/model/schema.py): one request,
one sha256, one recorded answer.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from verifier.constants import WORKER_MAX_FINDINGS, WORKER_MAX_LINKS
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
LINK_INSTRUCTIONS = (
    "You are a ResearchWiki worker doing one link leaf. Follow the skill section given. Weigh each finding "
    "shown against the hypothesis and link the ones that bear on it: `finding_id` exactly as shown, `stance` "
    "one of supports, contradicts, context, and a rationale saying why in one or two sentences. Link only "
    "findings that bear on the hypothesis; look hard for ones that contradict it. When `retry` is not empty, "
    "answer with replacements for exactly those links, fixing what each problem names (or leave one out). "
    'Answer with one JSON object: {"kind": "link", "links": [{"finding_id": "fnd_...", "stance": "supports", '
    '"rationale": "..."}], "model": "<your model name>"}.'
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


class LinkRetry(Strict):
    """A link the verifier's rules refused, and why."""

    finding_id: str
    stance: str
    problem: str


class ShownHypothesis(Strict):
    hypothesis_id: str
    revision: int
    statement: str


class ShownFinding(Strict):
    finding_id: str
    source_id: str
    statement: str
    excerpt: str
    limitation: str


class LinkRequest(Strict):
    kind: Literal["link"] = "link"
    version: Literal[1] = 1
    instructions: str = LINK_INSTRUCTIONS
    skill: str  # the skill's link section
    project: str
    leaf_id: str
    hypothesis: ShownHypothesis
    findings: list[ShownFinding]
    max_links: int = WORKER_MAX_LINKS
    retry: list[LinkRetry] = Field(default_factory=list)


class ProposedLink(Strict):
    # Plain strings, not the link format's types: a proposal the rules refuse is asked for again or
    # dropped by the worker, not a failed answer.
    finding_id: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    stance: Annotated[str, StringConstraints(min_length=1, max_length=40)]
    rationale: Short


class LinkAnswer(AnswerBase):
    kind: Literal["link"]
    links: list[ProposedLink] = Field(max_length=WORKER_MAX_LINKS)
