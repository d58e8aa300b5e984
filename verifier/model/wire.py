"""The JSON schema of each call kind's answer, as a provider's structured output asks for it. Pure.

The schema is derived from the same strict answer model `ask` parses with, so what the provider is
asked to produce and what is accepted cannot drift apart. A kind not named here (the loop's and the
Planner's calls, whose models live above this floor) is asked for as a JSON object; its answer is
parsed as strictly as any.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel

from verifier.model.schema import BaselineAnswer, ResolveAnswer
from verifier.model.work import ExtractAnswer, LinkAnswer, ScoutAnswer

ANSWERS: Mapping[str, type[BaseModel]] = {
    "baseline": BaselineAnswer, "resolve": ResolveAnswer, "extract": ExtractAnswer, "scout": ScoutAnswer,
    "link": LinkAnswer}
ANY_OBJECT: Mapping[str, object] = {"type": "object"}


def answer_schema(kind: str) -> dict[str, object]:
    """The answer schema of `kind`'s call (a fresh dict: the SDKs may keep what they are given)."""
    answer = ANSWERS.get(kind)
    return dict(answer.model_json_schema()) if answer is not None else dict(ANY_OBJECT)
