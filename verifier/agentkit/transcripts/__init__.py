"""Agent CLI transcripts read as trace events and a disclosure (issue 24): one pure parser per
format, each lines in, an `ImportedTranscript` out (docs/format.md, "Transcripts")."""

from collections.abc import Callable, Iterable

from verifier.agentkit.transcripts.claude import parse_claude_stream
from verifier.agentkit.transcripts.codex import parse_codex_jsonl
from verifier.agentkit.transcripts.model import Disclosure, ImportedEvent, ImportedTranscript, TranscriptError

PARSERS: dict[str, Callable[[Iterable[str]], ImportedTranscript]] = {
    "claude-stream-json": parse_claude_stream,  # claude -p --output-format stream-json --verbose
    "codex-jsonl": parse_codex_jsonl,  # codex exec --json
}
FORMATS = tuple(PARSERS)


def parse_transcript(fmt: str, raw: Iterable[str]) -> ImportedTranscript:
    """The parser of `fmt` (one of FORMATS) over `raw` lines."""
    if fmt not in PARSERS:
        raise ValueError(f"transcript format {fmt!r}: expected one of {', '.join(FORMATS)}")
    return PARSERS[fmt](raw)


__all__ = ["FORMATS", "PARSERS", "Disclosure", "ImportedEvent", "ImportedTranscript", "TranscriptError",
           "parse_claude_stream", "parse_codex_jsonl", "parse_transcript"]
