"""Claude Code's headless transcript (`claude -p --output-format stream-json --verbose`) read as
trace events and a disclosure. Pure: lines in, an `ImportedTranscript` out.

The stream is one JSON object per line (the Agent SDK's message types):
    system     subtype init: session_id, model, tools, cwd ...; other subtypes are notices
    assistant  message: {id, model, content: [text | thinking | tool_use ...], usage}
    user       message: {content: [tool_result {tool_use_id, content, is_error} ...] or text}
    result     the last line: subtype (success, error_max_turns, error_during_execution ...),
               is_error, duration_ms, num_turns, result (the answer), total_cost_usd, usage
    stream_event  partial deltas (--include-partial-messages): the whole message follows, so skipped
Mapping (docs/format.md, "Transcripts"): thinking and text blocks -> reasoning, tool_use ->
tool_call, tool_result -> tool_result, result -> final; a system line and any line type this
module does not know -> a tool_result naming it, so nothing the CLI said is silently lost.
"""

from __future__ import annotations

from collections.abc import Iterable

from verifier.agentkit.transcripts.model import (
    MAX_DURATION_S,
    MAX_USD,
    Disclosure,
    EventContent,
    ImportedEvent,
    ImportedTranscript,
    JsonObject,
    JsonValue,
    Line,
    Reading,
    add_counts,
    amount,
    as_content,
    count,
    items,
    obj,
    opt_obj,
    opt_str,
    read_lines,
)

FORMAT = "claude-stream-json"
SKIPPED = frozenset({"stream_event", "keep_alive"})


class _Run:
    """What the lines said so far: events, the model, usage per API message, the result line."""

    def __init__(self) -> None:
        self.events: list[ImportedEvent] = []
        self.model: str | None = None
        self.session_id: str | None = None
        self.tool_names: dict[str, str] = {}  # tool_use id -> tool name, to name each result
        self.usage: dict[str, tuple[int, JsonObject]] = {}  # API message id -> (line, usage): a message spans lines
        self.results: list[Line] = []  # one per run; a file of resumed runs holds several
        self.skipped: dict[str, int] = {}

    def add(self, kind: str, content: EventContent, line: int) -> None:
        self.events.append(ImportedEvent(kind, content, line))


def _text_of(value: JsonValue) -> JsonValue:
    """A tool result's content: a string as is, a list of text blocks joined, an image named."""
    if not isinstance(value, list):
        return value
    parts: list[str] = []
    for block in value:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(str(block["text"]))
        elif isinstance(block, dict) and isinstance(block.get("type"), str):
            parts.append(f"[{block['type']} block left out]")
        else:
            return value  # not the documented shape: kept whole
    return "\n".join(parts)


def _assistant(run: _Run, line: Line) -> None:
    message = obj(line.value.get("message"), line.number, "message")
    run.model = opt_str(message.get("model"), line.number, "message.model") or run.model
    usage = opt_obj(message.get("usage"), line.number, "message.usage")
    if usage is not None:
        run.usage[opt_str(message.get("id"), line.number, "message.id") or f"line-{line.number}"] = (line.number, usage)
    parent = line.value.get("parent_tool_use_id")
    within = {"within": parent} if isinstance(parent, str) else {}
    for each in items(message.get("content"), line.number, "message.content"):
        block = obj(each, line.number, "message.content[]")
        kind = block.get("type")
        if kind == "thinking":
            run.add("reasoning", opt_str(block.get("thinking"), line.number, "thinking") or "", line.number)
        elif kind == "text":
            run.add("reasoning", opt_str(block.get("text"), line.number, "text") or "", line.number)
        elif kind == "tool_use":
            tool_id = opt_str(block.get("id"), line.number, "tool_use.id") or ""
            name = opt_str(block.get("name"), line.number, "tool_use.name") or "unknown"
            run.tool_names[tool_id] = name
            run.add("tool_call", {"tool": name, "id": tool_id, "input": block.get("input"), **within}, line.number)
        elif kind == "redacted_thinking":
            run.skipped["redacted_thinking"] = run.skipped.get("redacted_thinking", 0) + 1
        else:
            run.add("tool_result", {"event": f"assistant.{kind}", "block": dict(block)}, line.number)


def _user(run: _Run, line: Line) -> None:
    message = obj(line.value.get("message"), line.number, "message")
    content = message.get("content")
    if isinstance(content, str):  # a prompt echoed back (--replay-user-messages): the agent's input
        run.skipped["user.text"] = run.skipped.get("user.text", 0) + 1
        return
    for each in items(content, line.number, "message.content"):
        block = obj(each, line.number, "message.content[]")
        if block.get("type") != "tool_result":
            run.skipped[f"user.{block.get('type')}"] = run.skipped.get(f"user.{block.get('type')}", 0) + 1
            continue
        tool_id = opt_str(block.get("tool_use_id"), line.number, "tool_result.tool_use_id") or ""
        run.add("tool_result", {"tool": run.tool_names.get(tool_id, "unknown"), "tool_use_id": tool_id,
                                "is_error": block.get("is_error") is True, "output": _text_of(block.get("content"))},
                line.number)


def _system(run: _Run, line: Line) -> None:
    value = line.value
    subtype = opt_str(value.get("subtype"), line.number, "subtype") or "notice"
    if subtype == "init":
        run.model = opt_str(value.get("model"), line.number, "model") or run.model
        run.session_id = opt_str(value.get("session_id"), line.number, "session_id") or run.session_id
        tools = value.get("tools")
        run.add("tool_result", {"event": "system.init", "model": run.model, "session_id": run.session_id,
                                "tools": tools if isinstance(tools, list) else [],
                                "permission_mode": value.get("permissionMode")}, line.number)
        return
    run.add("tool_result", {"event": f"system.{subtype}",
                            "data": {k: v for k, v in value.items() if k not in ("type", "subtype")}}, line.number)


def _final_text(result: Line) -> str:
    value = result.value
    answer = value.get("result")
    subtype = value.get("subtype")
    if value.get("is_error") is not True and subtype == "success":
        return answer if isinstance(answer, str) else ""
    turns = value.get("num_turns")
    said = f": {answer}" if isinstance(answer, str) and answer else ""
    errors = value.get("errors")
    listed = "; ".join(str(e) for e in errors) if isinstance(errors, list) else ""
    return (f"claude ended with {subtype or 'an error'}" + (f" after {turns} turns" if isinstance(turns, int) else "")
            + said + (f" ({listed})" if listed else ""))


def _tokens(usage: JsonObject, line: int, where: str) -> tuple[int | None, int | None, int | None]:
    """(in, out, cached) of an Anthropic usage object: input counts every token read, cached too."""
    plain = count(usage.get("input_tokens"), line, f"{where}.input_tokens")
    created = count(usage.get("cache_creation_input_tokens"), line, f"{where}.cache_creation_input_tokens")
    read = count(usage.get("cache_read_input_tokens"), line, f"{where}.cache_read_input_tokens")
    out = count(usage.get("output_tokens"), line, f"{where}.output_tokens")
    tokens_in = add_counts(add_counts(plain, created), read)
    return tokens_in, out, read


def _sum(left: float | None, right: float | None, ceiling: float) -> float | None:
    return left if right is None else min(ceiling, (left or 0.0) + right)


def _disclosure(run: _Run) -> Disclosure:
    """Usage, cost and time from the result lines (summed over runs); with no result line (a
    killed run) the tokens are the sum of each API message's usage, and cost and time unknown."""
    tokens_in = tokens_out = cached = None
    usd = duration = None
    usages = [(r.number, "usage", opt_obj(r.value.get("usage"), r.number, "usage")) for r in run.results]
    if not usages:
        usages = [(number, "message.usage", each) for number, each in run.usage.values()]
    for number, where, usage in usages:
        if usage is not None:
            got = _tokens(usage, number, where)
            tokens_in, tokens_out = add_counts(tokens_in, got[0]), add_counts(tokens_out, got[1])
            cached = add_counts(cached, got[2])
    for result in run.results:
        usd = _sum(usd, amount(result.value.get("total_cost_usd"), result.number, "total_cost_usd", MAX_USD), MAX_USD)
        millis = amount(result.value.get("duration_ms"), result.number, "duration_ms", MAX_DURATION_S * 1000)
        duration = _sum(duration, None if millis is None else round(millis / 1000, 3), MAX_DURATION_S)
    return Disclosure(model=run.model, tokens_in=tokens_in, tokens_out=tokens_out, tokens_cached=cached, usd=usd,
                      duration_s=duration)


def parse_claude_stream(raw: Iterable[str]) -> ImportedTranscript:
    """Claude Code stream-json lines as trace events and what the run disclosed (module docstring).

    `TranscriptError` names the first malformed line; a cut-short last line is left out and reported."""
    run = _Run()
    reading = Reading()
    for line in read_lines(raw, reading):
        if line.type == "assistant":
            _assistant(run, line)
        elif line.type == "user":
            _user(run, line)
        elif line.type == "system":
            _system(run, line)
        elif line.type == "result":
            run.results.append(line)
            run.session_id = opt_str(line.value.get("session_id"), line.number, "session_id") or run.session_id
            run.add("final", _final_text(line), line.number)
        elif line.type in SKIPPED:
            run.skipped[line.type] = run.skipped.get(line.type, 0) + 1
        else:
            run.add("tool_result", {"event": line.type, "data": as_content(dict(line.value))}, line.number)
    outcome = "no result line" if reading.lines else None
    if run.results:
        last = run.results[-1]
        outcome = opt_str(last.value.get("subtype"), last.number, "subtype")
    return ImportedTranscript(FORMAT, tuple(run.events), _disclosure(run), run.session_id, outcome, reading.lines,
                              reading.truncated_line, run.skipped)
