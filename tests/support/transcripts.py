"""The shipped agent CLI transcripts (fixtures/transcripts/) and their golden readings
(tests/golden/transcripts/), and a working folder to import them into without a server."""

from __future__ import annotations

import json
from pathlib import Path

from verifier.agentkit.transcripts import ImportedTranscript, parse_transcript
from verifier.agentkit.workdir import Work, WorkState

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "transcripts"
GOLDEN = ROOT / "tests" / "golden" / "transcripts"
# fixture name -> its format
SHIPPED = {"claude-stream-extract": "claude-stream-json", "claude-stream-killed": "claude-stream-json",
           "claude-stream-max-turns": "claude-stream-json", "codex-exec-extract": "codex-jsonl",
           "codex-exec-failed": "codex-jsonl"}


def fixture(name: str) -> Path:
    return FIXTURES / f"{name}.jsonl"


def parsed(name: str) -> ImportedTranscript:
    with fixture(name).open(encoding="utf-8") as lines:
        return parse_transcript(SHIPPED[name], lines)


def reading(transcript: ImportedTranscript) -> dict[str, object]:
    """What a golden file holds: the summary and every event as (line, type, content)."""
    return {"summary": transcript.summary(),
            "events": [{"line": e.line, "type": e.type, "content": e.content} for e in transcript.events]}


def golden(name: str) -> dict[str, object]:
    value: dict[str, object] = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
    return value


def write_golden(name: str) -> None:
    """Rewrite a golden file from the parser (by hand, after reading the difference)."""
    text = json.dumps(reading(parsed(name)), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    (GOLDEN / f"{name}.json").write_text(text, encoding="utf-8")


def bare_folder(root: Path, *, level: str = "L2") -> Work:
    """A working folder as `rw work` leaves one, minus the clone: enough for `rw trace`."""
    work = Work(root.resolve(), WorkState(server="http://127.0.0.1:9", project="demo", leaf_id="extract-3f2a9c1d7b4e",
                                          kind="extract", base_revision="a" * 40, agent="agent-a", operator="op-a",
                                          level=level))
    work.save()
    return work
