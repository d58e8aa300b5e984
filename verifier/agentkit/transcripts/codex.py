"""Codex's headless transcript (`codex exec --json`) read as trace events and a disclosure. Pure:
lines in, an `ImportedTranscript` out.

The stream is one JSON object per line (codex-rs/exec's ThreadEvent):
    thread.started    thread_id
    turn.started      a prompt went to the model
    item.started | item.updated | item.completed    item: {id, type, ...} where type is
                      agent_message {text}, reasoning {text}, plan {text},
                      command_execution {command, aggregated_output, exit_code, status},
                      file_change {changes: [{path, kind}], status},
                      mcp_tool_call {server, tool, arguments, result, error, status},
                      web_search {query, action}, todo_list {items: [{text, completed}]},
                      collab_tool_call {...}, error {message}
    turn.completed    usage: {input_tokens, cached_input_tokens, output_tokens} (that turn's)
    turn.failed       error: {message}
    error             message (the stream's own, unrecoverable)
Mapping (docs/format.md, "Transcripts"): an item counts once, in its last state: completed, or,
for one a killed run never completed, its latest started/updated state marked `incomplete`.
reasoning, plan and todo_list -> reasoning; command_execution, file_change, mcp_tool_call,
collab_tool_call and web_search -> a tool_call, and (except web_search) its tool_result;
agent_message -> reasoning, but the run's last one -> final; error items, turn.failed, error
and any unknown line or item type -> a tool_result naming it.
Disclosure: tokens are the sum over turns (cached input is part of input, as codex counts
it). codex names neither its model nor a cost nor a duration in this stream: model, usd and
duration_s stay None (`rw trace meta` sets what the caller knows; no price table is guessed).
"""

from __future__ import annotations

from collections.abc import Iterable

from verifier.agentkit.transcripts.model import (
    Disclosure,
    EventContent,
    ImportedEvent,
    ImportedTranscript,
    JsonObject,
    Reading,
    add_counts,
    as_content,
    count,
    items,
    obj,
    opt_str,
    read_lines,
)

FORMAT = "codex-jsonl"
SKIPPED = frozenset({"turn.started", "item.plan.delta"})
_TOOLS = ("command_execution", "file_change", "mcp_tool_call", "collab_tool_call", "web_search")


def _text(item: JsonObject, line: int) -> str:
    return opt_str(item.get("text"), line, "item.text") or ""


def _todo(item: JsonObject, line: int) -> str:
    rows = []
    for each in items(item.get("items"), line, "item.items"):
        entry = obj(each, line, "item.items[]")
        rows.append(f"- [{'x' if entry.get('completed') is True else ' '}] {opt_str(entry.get('text'), line, 'text')}")
    return "plan:\n" + "\n".join(rows)


def _tool(kind: str, item: JsonObject, line: int) -> tuple[EventContent, EventContent | None]:
    """A tool item's call and (None for a web search, which reports no result) its result."""
    status = item.get("status")
    if kind == "command_execution":
        return ({"tool": "shell", "id": item.get("id"), "command": opt_str(item.get("command"), line, "command")},
                {"tool": "shell", "id": item.get("id"), "status": status, "exit_code": item.get("exit_code"),
                 "output": opt_str(item.get("aggregated_output"), line, "aggregated_output") or ""})
    if kind == "file_change":
        changes = [dict(obj(c, line, "changes[]")) for c in items(item.get("changes"), line, "changes")]
        return ({"tool": "apply_patch", "id": item.get("id"), "changes": changes},
                {"tool": "apply_patch", "id": item.get("id"), "status": status})
    if kind == "mcp_tool_call":
        name = f"mcp:{opt_str(item.get('server'), line, 'server')}/{opt_str(item.get('tool'), line, 'tool')}"
        return ({"tool": name, "id": item.get("id"), "arguments": item.get("arguments")},
                {"tool": name, "id": item.get("id"), "status": status, "result": item.get("result"),
                 "error": item.get("error")})
    if kind == "web_search":
        return {"tool": "web_search", "id": item.get("id"), "query": opt_str(item.get("query"), line, "query"),
                "action": item.get("action")}, None
    fields = {k: v for k, v in item.items() if k not in ("type", "id", "status")}
    return ({"tool": kind, "id": item.get("id"), **fields}, {"tool": kind, "id": item.get("id"), "status": status})


def _item_events(item: JsonObject, line: int, incomplete: bool) -> list[ImportedEvent]:
    kind = opt_str(item.get("type"), line, "item.type") or "unknown"
    mark: dict[str, object] = {"incomplete": True} if incomplete else {}
    if kind in ("reasoning", "plan", "agent_message"):
        return [ImportedEvent("reasoning", _text(item, line), line)]
    if kind == "todo_list":
        return [ImportedEvent("reasoning", _todo(item, line), line)]
    if kind in _TOOLS:
        call, result = _tool(kind, item, line)
        events = [ImportedEvent("tool_call", call, line)]
        if isinstance(result, dict):
            events.append(ImportedEvent("tool_result", {**result, **mark}, line))
        return events
    if kind == "error":
        return [ImportedEvent("tool_result", {"event": "item.error", "message": item.get("message"), **mark}, line)]
    return [ImportedEvent("tool_result", {"event": f"item.{kind}", "item": dict(item), **mark}, line)]


def parse_codex_jsonl(raw: Iterable[str]) -> ImportedTranscript:
    """`codex exec --json` lines as trace events and what the run disclosed (module docstring).

    `TranscriptError` names the first malformed line; a cut-short last line is left out and reported."""
    events: list[ImportedEvent] = []
    pending: dict[str, tuple[int, JsonObject]] = {}  # item id -> (line, latest state) until completed
    last_message: int | None = None  # index in events of the latest agent_message
    tokens_in = tokens_out = cached = None
    session_id: str | None = None
    outcome: str | None = None
    skipped: dict[str, int] = {}
    reading = Reading()
    for line in read_lines(raw, reading):
        value, number = line.value, line.number
        if line.type in ("item.started", "item.updated", "item.completed"):
            item = obj(value.get("item"), number, "item")
            item_id = opt_str(item.get("id"), number, "item.id") or f"line-{number}"
            if line.type != "item.completed":
                pending[item_id] = (number, item)
                continue
            pending.pop(item_id, None)
            if item.get("type") == "agent_message":
                last_message = len(events)
            events.extend(_item_events(item, number, incomplete=False))
        elif line.type == "turn.completed":
            usage = obj(value.get("usage"), number, "usage")
            tokens_in = add_counts(tokens_in, count(usage.get("input_tokens"), number, "usage.input_tokens"))
            cached = add_counts(cached, count(usage.get("cached_input_tokens"), number, "usage.cached_input_tokens"))
            tokens_out = add_counts(tokens_out, count(usage.get("output_tokens"), number, "usage.output_tokens"))
            outcome = "completed"
        elif line.type in ("turn.failed", "error"):
            error = value.get("error") if line.type == "turn.failed" else value
            message = error.get("message") if isinstance(error, dict) else error
            events.append(ImportedEvent("tool_result", {"event": line.type, "message": message}, number))
            outcome = "failed"
        elif line.type == "thread.started":
            session_id = opt_str(value.get("thread_id"), number, "thread_id")
        elif line.type in SKIPPED:
            skipped[line.type] = skipped.get(line.type, 0) + 1
        else:
            events.append(ImportedEvent("tool_result", {"event": line.type, "data": as_content(dict(value))}, number))
    for number, item in pending.values():  # started, never completed: the run was cut off
        events.extend(_item_events(item, number, incomplete=True))
    if last_message is not None:
        answer = events[last_message]
        events[last_message] = ImportedEvent("final", answer.content, answer.line)
    if outcome is None and reading.lines:
        outcome = "no completed turn"
    return ImportedTranscript(FORMAT, tuple(events), Disclosure(tokens_in=tokens_in, tokens_out=tokens_out,
                                                                tokens_cached=cached),
                              session_id, outcome, reading.lines, reading.truncated_line, skipped)
