"""The agent CLI transcript importers (issue 24 point 1), pure: each shipped transcript read into
exactly its golden events and disclosure; a malformed line refused with its number wherever it
is; a cut-short last line left out and reported; unknown line types kept, never a crash."""

from __future__ import annotations

import json

import pytest

from tests.support.transcripts import SHIPPED, fixture, golden, parsed, reading
from verifier.agentkit.transcripts import Disclosure, TranscriptError, parse_claude_stream, parse_codex_jsonl


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_each_shipped_transcript_reads_as_its_golden_events_and_disclosure(name: str) -> None:
    assert reading(parsed(name)) == golden(name)


def test_a_claude_run_discloses_model_tokens_cost_and_duration_from_its_result_line() -> None:
    transcript = parsed("claude-stream-extract")
    assert transcript.disclosure == Disclosure(model="claude-sonnet-4-5-20250929", tokens_in=15 + 11479 + 72304,
                                               tokens_out=860, tokens_cached=72304, usd=0.0831275, duration_s=48.213)
    assert transcript.disclosure.total_tokens == 15 + 11479 + 72304 + 860
    assert [e.type for e in transcript.events][-1] == "final"
    assert transcript.events[-1].content == "Wrote one finding quoting the source exactly; `rw check` passes."
    calls = [e.content for e in transcript.events if e.type == "tool_call"]
    results = [e.content for e in transcript.events if e.type == "tool_result"]
    assert [c["tool"] for c in calls if isinstance(c, dict)] == ["Read", "Bash", "Bash", "Bash"]
    failed = [r for r in results if isinstance(r, dict) and r.get("is_error")]
    assert len(failed) == 1 and failed[0]["tool"] == "Bash"  # the result is named after its call
    assert transcript.outcome == "success" and transcript.truncated_line is None


def test_a_killed_claude_run_keeps_what_it_did_sums_message_usage_once_and_reports_the_cut_line() -> None:
    transcript = parsed("claude-stream-killed")
    assert transcript.truncated_line == 10 and transcript.outcome == "no result line"
    assert "final" not in {e.type for e in transcript.events}
    # msg_01Hk3 spans two lines with one usage: counted once
    assert transcript.disclosure.tokens_in == (4 + 6210 + 11873) + (6 + 1890 + 18083) + (3 + 2402 + 19973)
    assert transcript.disclosure.usd is None and transcript.disclosure.duration_s is None  # never guessed
    unknown = [e.content for e in transcript.events if isinstance(e.content, dict)
               and e.content.get("event") == "rate_limit_event"]
    assert len(unknown) == 1  # a line type this reader does not know is kept as a tool result


def test_a_claude_run_stopped_at_max_turns_ends_with_a_final_saying_so() -> None:
    transcript = parsed("claude-stream-max-turns")
    assert transcript.outcome == "error_max_turns"
    assert transcript.events[-1].type == "final"
    assert transcript.events[-1].content == "claude ended with error_max_turns after 4 turns"
    assert transcript.disclosure.usd == 0.0412


def test_a_codex_run_sums_turn_usage_and_leaves_model_cost_and_duration_undisclosed() -> None:
    transcript = parsed("codex-exec-extract")
    assert transcript.disclosure == Disclosure(tokens_in=24763 + 31102, tokens_out=122 + 58,
                                               tokens_cached=24448 + 30976)
    assert transcript.events[-1] == transcript.events[-1].__class__(
        "final", "Submitted: one finding on src-8c1e2f, quoting it exactly.", 18)
    earlier = [e for e in transcript.events if e.content == "I wrote one finding and ran `rw check`."]
    assert [e.type for e in earlier] == ["reasoning"]  # only the run's last message is its final
    shells = [e.content for e in transcript.events if e.type == "tool_result" and isinstance(e.content, dict)
              and e.content.get("tool") == "shell"]
    assert [(s["exit_code"], s["status"]) for s in shells] == [(0, "completed"), (0, "completed"), (4, "failed")]
    assert transcript.skipped == {"turn.started": 2}


def test_a_failed_codex_run_keeps_its_errors_and_the_items_it_never_completed() -> None:
    transcript = parsed("codex-exec-failed")
    assert transcript.outcome == "failed" and transcript.truncated_line == 13
    events = {e.content.get("event") for e in transcript.events if isinstance(e.content, dict)}
    assert {"item.error", "error", "turn.failed"} <= events
    incomplete = [e.content for e in transcript.events if isinstance(e.content, dict) and e.content.get("incomplete")]
    assert [c["id"] for c in incomplete] == ["item_4"]
    assert transcript.disclosure == Disclosure()  # no completed turn: nothing disclosed, nothing made up


@pytest.mark.parametrize(("parser", "name"), [(parse_claude_stream, "claude-stream-extract"),
                                              (parse_codex_jsonl, "codex-exec-extract")])
@pytest.mark.parametrize("bad", ["{\"type\": \"assistant\", \"message\": ", "[1, 2]", "{\"no\": \"type\"}"])
def test_a_malformed_line_is_refused_with_its_number(parser: object, name: str, bad: str) -> None:
    lines = fixture(name).read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(3, bad + "\n")
    assert callable(parser)
    with pytest.raises(TranscriptError) as refused:
        parser(lines)
    assert refused.value.line == 4 and str(refused.value).startswith("line 4: ")


def test_a_line_of_the_wrong_shape_is_refused_with_its_number_and_field() -> None:
    lines = ['{"type":"system","subtype":"init","model":"m","session_id":"s"}\n',
             '{"type":"assistant","message":{"content":"not a list"}}\n']
    with pytest.raises(TranscriptError, match=r"^line 2: `message.content` should be a list"):
        parse_claude_stream(lines)
    negative = ['{"type":"turn.completed","usage":{"input_tokens":-5,"cached_input_tokens":0,"output_tokens":1}}\n']
    with pytest.raises(TranscriptError, match=r"^line 1: `usage.input_tokens` should be a whole number"):
        parse_codex_jsonl(negative)


def test_unknown_types_are_kept_as_tool_results_and_blank_lines_skipped() -> None:
    lines = ["\n", json.dumps({"type": "brand.new", "payload": {"x": 1}}) + "\n",
             json.dumps({"type": "item.completed", "item": {"id": "i", "type": "hologram", "beam": 3}}) + "\n"]
    codex = parse_codex_jsonl(lines)
    assert [e.content for e in codex.events] == [
        {"event": "brand.new", "data": {"type": "brand.new", "payload": {"x": 1}}},
        {"event": "item.hologram", "item": {"id": "i", "type": "hologram", "beam": 3}}]
    claude = parse_claude_stream(lines[:2])
    assert claude.events[0].type == "tool_result" and claude.lines == 1


def test_a_later_disclosure_replaces_only_what_it_knows() -> None:
    first = Disclosure(model="m1", tokens=500, usd=0.5)
    later = Disclosure(tokens_in=100, tokens_out=20, duration_s=3.0)
    merged = later.over(first)
    assert merged == Disclosure(model="m1", tokens_in=100, tokens_out=20, usd=0.5, duration_s=3.0)
    assert merged.total_tokens == 120  # the split replaced the bare total
    assert merged.manifest_fields() == {"model": "m1", "tokens": 120, "tokens_in": 100, "tokens_out": 20,
                                        "usd": 0.5, "duration_s": 3.0}
