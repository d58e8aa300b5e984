"""Recorded answers for the platform worker's model, written the way a model would answer.

`Scribe` is a recorded backend that, for a request it has no answer to yet, first writes one into
its folder (as a recording session over a live model would), then replays it like any recorded
answer; a second run over the same folder replays only. Its answers stand in for a model that
follows the skill section it is sent:

- extract: the first sentences of the source text as findings. When the skill section says
  "verbatim", every excerpt but the last is exact and the last is "tidied" (a changed word) on the
  first call, and exact when the worker asks again for it; without "verbatim" every excerpt is
  tidied, every time. "five findings" in the section asks for five, otherwise three;
- scout: fixed metadata of the pinned source;
- link: the first finding shown supports the hypothesis, the second "refutes" it (not a stance;
  "contradicts" when the worker asks again) and one more names a finding that was never shown
  (named again every time). With "never contradicts" in the section every link supports.

The worker under test is the platform's own (verifier/agentkit/modelworker.py); only the model's
answers are scripted here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from verifier.model.adapter import BackendName, Exchange, RecordedBackend, recording_path

SENTENCE_RE = re.compile(r"[A-Z][^.!?\n]{40,260}[.!?]")


def tidy(sentence: str) -> str:
    return sentence.replace(" the ", " a ", 1).replace(" of ", " in ", 1)


def extract_answer(request: dict[str, object]) -> dict[str, object]:
    skill = str(request["skill"])
    sentences = SENTENCE_RE.findall(str(request["source_text"]))[: 5 if "five findings" in skill else 3]
    verbatim = "verbatim" in skill
    retry = request.get("retry") or []
    assert isinstance(retry, list)
    if retry:
        wanted = [str(item["excerpt"]) for item in retry]
        exact = {tidy(s): s for s in sentences}
        chosen = [exact.get(excerpt, excerpt) if verbatim else excerpt for excerpt in wanted]
    else:
        chosen = [s if verbatim and i < len(sentences) - 1 else tidy(s) for i, s in enumerate(sentences)]
    return {"kind": "extract", "model": "scribe-1",
            "findings": [{"excerpt": excerpt, "statement": f"The source states: {excerpt[:120]}",
                          "limitation": "One source; not independently checked."} for excerpt in chosen]}


def scout_answer(_request: dict[str, object]) -> dict[str, object]:
    return {"kind": "scout", "model": "scribe-1", "title": "Pinned source", "published": "2026-02-01",
            "language": "en", "rights": "public"}


UNSHOWN = "fnd_0000000000000000"


def link_answer(request: dict[str, object]) -> dict[str, object]:
    retry = request.get("retry") or []
    assert isinstance(retry, list)
    if retry:
        links = [{"finding_id": item["finding_id"], "stance": "contradicts" if item["stance"] == "refutes"
                  else item["stance"], "rationale": "Asked again: the figures say otherwise."} for item in retry]
    else:
        findings = request["findings"]
        assert isinstance(findings, list)
        shown = [str(item["finding_id"]) for item in findings]
        second = "supports" if "never contradicts" in str(request["skill"]) else "refutes"
        links = [{"finding_id": shown[0], "stance": "supports", "rationale": "The figures agree."},
                 {"finding_id": shown[1], "stance": second, "rationale": "The figures disagree."},
                 {"finding_id": UNSHOWN, "stance": "supports", "rationale": "A finding remembered, not shown."}]
    return {"kind": "link", "model": "scribe-1", "links": links}


def answer_for(request: bytes) -> bytes:
    value = json.loads(request)
    answers = {"extract": extract_answer, "link": link_answer}
    answer = answers.get(value["kind"], scout_answer)(value)
    return json.dumps(answer, sort_keys=True).encode()


@dataclass(frozen=True)
class Scribe:
    folder: Path
    written: list[str] = field(default_factory=list)
    name: BackendName = "recorded"

    def exchange(self, request: bytes) -> Exchange:
        path = recording_path(self.folder, request)
        if not path.exists():
            self.folder.mkdir(parents=True, exist_ok=True)
            path.write_bytes(answer_for(request))
            self.written.append(path.name)
        return RecordedBackend(self.folder).exchange(request)
