"""What is said to a frontier model and what it must answer: strict request and answer models. Pure.

Two kinds of call exist in v0:

- `baseline`: the statement and criterion only, no corpus (design §3.5.1), answered with a
  verdict true or false and a confidence;
- `resolve`: the statement, criterion and measure with the linked evidence (§5.1 Resolver),
  answered with true, false or unresolved, a confidence and a rationale.

A request travels as canonical JSON (sorted keys, no spaces, UTF-8); its sha256 names the call and
keys recorded answers. An answer is parsed strictly: unknown fields, duplicate keys, a wrong kind
or a string where a number belongs are errors that say what was found.
"""

from __future__ import annotations

import hashlib
import json
from datetime import date
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from verifier.formats.base import Strict, Text
from verifier.formats.project import HypothesisId

BASELINE_INSTRUCTIONS = (
    "You are given a hypothesis and the criterion that decides it on its check date, and nothing "
    "else. Without searching for or citing any material, say whether you expect the criterion to "
    "be met. Answer with one JSON object: "
    '{"kind": "baseline", "verdict": "true" | "false", "confidence": <0..1>, "model": "<your model name>"}.'
)
RESOLVE_INSTRUCTIONS = (
    "You are given a hypothesis, the criterion that decides it, the measure that says where and how "
    "the criterion is checked, and the evidence linked to it. Check the criterion against the measure "
    "as of the check date. Answer with one JSON object: "
    '{"kind": "resolve", "verdict": "true" | "false" | "unresolved", "confidence": <0..1>, '
    '"rationale": "<why, citing link ids>", "model": "<your model name>"}. Say "unresolved" when '
    "the measure cannot be checked."
)
RATIONALE_MAX = 8000
MODEL_NAME_RE = r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,99}$"


class BaselineRequest(Strict):
    """A baseline call: the hypothesis and its criterion, deliberately nothing from the corpus."""

    kind: Literal["baseline"] = "baseline"
    version: Literal[1] = 1
    instructions: str = BASELINE_INSTRUCTIONS
    hypothesis_id: HypothesisId
    revision: int = Field(ge=1)
    statement: Text
    criterion: Text


Stance = Literal["supports", "contradicts", "context"]


class Evidence(Strict):
    """One accepted evidence link and the finding it carries."""

    link_id: str
    finding_id: str
    stance: Stance
    statement: Text
    excerpt: Text
    limitation: Text
    source_id: str
    source_url: str | None = None


class ResolveRequest(Strict):
    """A resolution call: check the criterion against the measure, given the linked evidence."""

    kind: Literal["resolve"] = "resolve"
    version: Literal[1] = 1
    instructions: str = RESOLVE_INSTRUCTIONS
    hypothesis_id: HypothesisId
    revision: int = Field(ge=1)
    statement: Text
    criterion: Text
    measure: Text
    check_date: date
    evidence: list[Evidence] = Field(default_factory=list)


ModelRequest = BaselineRequest | ResolveRequest


class AnswerBase(BaseModel):
    """What every answer is: strict, closed, and free to name the model that gave it."""

    # strict=True: a verdict of JSON `true` or a confidence of "0.8" is refused, not coerced, so
    # the model's command must speak the contract exactly.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    # The model's own name for itself, if its command discloses it. The character set and bound
    # let it go into a sealed Baseline as it is, even with the "recorded:" prefix.
    model: Annotated[str, StringConstraints(pattern=MODEL_NAME_RE)] | None = None


class _Answer(AnswerBase):
    confidence: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)


class BaselineAnswer(_Answer):
    kind: Literal["baseline"]
    verdict: Literal["true", "false"]


class ResolveAnswer(_Answer):
    kind: Literal["resolve"]
    verdict: Literal["true", "false", "unresolved"]
    rationale: Annotated[str, StringConstraints(min_length=1, max_length=RATIONALE_MAX)]


ModelAnswer = BaselineAnswer | ResolveAnswer
A = TypeVar("A", bound=AnswerBase)


def request_bytes(request: BaseModel) -> bytes:
    """The exact bytes sent on stdin: canonical JSON, so one request has one sha256."""
    return json.dumps(request.model_dump(mode="json"), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode("utf-8")


def request_sha256(request: BaseModel) -> str:
    return hashlib.sha256(request_bytes(request)).hexdigest()


class AnswerError(ValueError):
    """An answer that is not JSON (`not_json`) or does not match its schema (`invalid`).

    `headline` names the problem without quoting the answer; `detail` quotes what was found.
    """

    def __init__(self, problem: Literal["not_json", "invalid"], headline: str, detail: str = "") -> None:
        self.problem = problem
        self.headline = headline
        self.detail = detail
        super().__init__(f"{headline}; {detail}" if detail else headline)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise AnswerError("invalid", f"the answer names field {key!r} twice")
        seen[key] = value
    return seen


def _preview(data: bytes) -> str:
    return repr(data[:120]) + ("..." if len(data) > 120 else "")


def _describe(exc: ValidationError) -> tuple[str, str]:
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "(answer)"
    found = ""
    if first["type"] == "missing":
        problem = "required field is missing"
    elif first["type"] == "extra_forbidden":
        problem = "unknown field (not in the answer schema)"
    else:
        problem, found = first["msg"], f"found {first.get('input')!r}"
    more = len(exc.errors()) - 1
    suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    return f"answer field {field}: {problem}{suffix}", found


def parse_answer(model: type[A], data: bytes) -> A:
    """Parse answer bytes as `model`; AnswerError says what was found and what was expected."""
    try:
        value = json.loads(data.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except AnswerError:
        raise
    except (UnicodeDecodeError, ValueError) as exc:
        raise AnswerError("not_json", f"the answer is not JSON ({exc})", f"it began {_preview(data)}") from exc
    if not isinstance(value, dict):
        raise AnswerError("invalid", f"the answer is a JSON {type(value).__name__}, expected an object")
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        headline, found = _describe(exc)
        raise AnswerError("invalid", f"{headline}; expected a {model.__name__} (docs/resolver.md)", found) from exc
