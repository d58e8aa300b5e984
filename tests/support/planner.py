"""Helpers for the Planner's tests: findings a scripted agent can quote from any source text."""

from __future__ import annotations

import re
from typing import Any

SENTENCE = re.compile(r"[A-Z][^.\n]{30,300}\.")


def findings_from(text: str, count: int = 3) -> list[dict[str, Any]]:
    """`count` findings, each quoting one whole sentence of the source exactly."""
    sentences = list(dict.fromkeys(SENTENCE.findall(text)))
    assert len(sentences) >= count, f"the source has only {len(sentences)} quotable sentences"
    return [{"excerpt": sentence, "statement": f"The source states: {sentence[:120]}",
             "limitation": "One sentence of one fixture source; not checked against any other."}
            for sentence in sentences[:count]]
