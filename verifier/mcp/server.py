"""`rw mcp`: the agent's loop (board, work, read, write objects, check, submit, messages, release)
as MCP tools over stdio, and the skill as an MCP prompt and resource, on the official MCP SDK.

Each tool calls the same functions `rw work`/`rw new`/`rw check`/`rw submit` call
(verifier.agentkit.loop, .localcheck), so it refuses what they refuse with the same code and
message; a refusal is a tool error (`is_error`) whose text is the CLI's `Error: ...` line and
whose structured content carries `code` (verifier.errors) and `exit_code` (what `rw` would exit
with). Every argument is hostile: each tool's parameters are a pydantic model the SDK checks
before the tool runs (types, lengths, id patterns, choices), a path must be a plain path below the
leaf's working folder (verifier.agentkit.safefiles), and anything that still goes wrong is a
tool error naming the crash, never the end of the server.

The server holds no state of its own: working folders live under `root` (`--dir`), one per leaf
(`root/LEAF_ID`, made by the `work` tool), and every later tool names its leaf.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import quote

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent
from pydantic import Field, Strict

from verifier.agentkit import loop
from verifier.agentkit.localcheck import result_json, run_checks
from verifier.agentkit.safefiles import LinkRefused, read_bytes, segments
from verifier.agentkit.served import LEAF_ID_RE
from verifier.agentkit.skillref import current_skill_version, skill_path
from verifier.agentkit.tracing import EVENT_TYPES
from verifier.agentkit.workdir import STATE_DIR, STATE_FILE, Work, find_work
from verifier.client.http import Client
from verifier.constants import CLAIM_TTL_S, MCP_MAX_READ, MCP_MAX_SHORT, MCP_MAX_TEXT, READ_RETRY_S, SUBMIT_RETRY_S
from verifier.errors import EXIT_CRASH, AuthError, FormatError, UntrustedReply, VerifierError
from verifier.formats.ids import SOURCE_ID_RE
from verifier.formats.source import EXTENSION_BY_MEDIA_TYPE
from verifier.version import verifier_version

log = logging.getLogger("rw.mcp")

JsonValue = object
Slug = Annotated[str, Field(min_length=2, max_length=63, pattern=r"^[a-z0-9][a-z0-9-]+$",
                            description="The project's slug, like `demo`.")]
LeafId = Annotated[str, Field(min_length=3, max_length=64, pattern=LEAF_ID_RE.pattern,
                              description="The leaf's id, as the board shows it.")]
SourceId = Annotated[str, Field(max_length=20, pattern=SOURCE_ID_RE.pattern, description="src_ and 16 hex digits.")]
Text = Annotated[str, Field(min_length=1, max_length=MCP_MAX_TEXT)]
Short = Annotated[str, Field(min_length=1, max_length=MCP_MAX_SHORT)]
RelPath = Annotated[str, Field(min_length=1, max_length=MCP_MAX_SHORT,
                               description="A path below the leaf's working folder, like `.rw/payload.json`.")]
# Strict: true is no number (lax pydantic reads it as 1). A string holding a number ("30") is still
# read as that number: the SDK parses a JSON text in a string argument first, for clients that
# send every argument as a string (docs/mcp.md).
Offset = Annotated[int, Strict(), Field(ge=0, le=2**40)]
Length = Annotated[int, Strict(), Field(ge=1, le=MCP_MAX_READ)]
Stance = Literal["supports", "contradicts", "context"]
BoardState = Literal["open", "claimed", "expired", "accepted", "held", "rejected", "reverted", "all"]
Level = Literal["L1", "L2", "L3"]


def _one_of(choices: Iterable[str], what: str) -> object:
    """A pattern admitting exactly these words (the lists live with their formats, not here)."""
    words = sorted(choices)
    return Field(pattern="^(" + "|".join(re.escape(word) for word in words) + ")$",
                 description=f"{what}: one of {', '.join(words)}.")


MediaType = Annotated[str, _one_of(EXTENSION_BY_MEDIA_TYPE, "the media type")]
EventKind = Annotated[str, _one_of(EVENT_TYPES, "the event kind")]

INSTRUCTIONS = """ResearchWiki: claim a leaf (`work`), read its payload and source text (`read_payload`,
`read_source`), write objects (`new_finding`, ...), run the verifier's checks locally (`check`), then
`submit` and read the verdict. Every tool names the leaf it works on. The `researchwiki` prompt is the skill."""


@dataclass(frozen=True)
class Door:
    """Where the tools reach: the service, the token (never an argument), the folder they work under."""

    server: str
    token: str
    root: Path

    def client(self, retry_for_s: float = READ_RETRY_S) -> Client:
        if not self.token:
            raise AuthError("no token: set RW_TOKEN in the MCP server's environment")
        return Client(self.server, self.token, retry_for_s=retry_for_s)

    def reader(self) -> Client:
        return Client(self.server, self.token or None, retry_for_s=READ_RETRY_S)

    def work(self, leaf_id: str) -> Work:
        folder = self.root / leaf_id  # leaf_id is a checked id: one plain segment
        if not (folder / STATE_DIR / STATE_FILE).is_file():
            raise FormatError(f"no working folder for leaf {leaf_id} under {self.root}: claim it with `work` first")
        try:
            return find_work(folder)
        except LinkRefused as exc:
            raise UntrustedReply(str(exc)) from exc


def ok_result(value: Mapping[str, JsonValue]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(value, indent=2, sort_keys=True))],
                          structured_content=dict(value))


def error_result(exc: BaseException, tool: str) -> CallToolResult:
    """The refusal as `rw` says it: the `Error: ...` line, its code and the exit code `rw` would use."""
    if isinstance(exc, VerifierError):
        message = f"[{exc.code}] {exc}" if isinstance(exc, UntrustedReply) else str(exc)
        code, exit_code = exc.code, exc.exit_code
    elif isinstance(exc, LinkRefused):
        message, code, exit_code = f"[{UntrustedReply.code}] {exc}", UntrustedReply.code, UntrustedReply.exit_code
    elif isinstance(exc, OSError):
        message, code, exit_code = f"{exc.strerror or exc}", "os_error", FormatError.exit_code
    else:
        log.exception("the MCP tool %s crashed", tool)
        message, code, exit_code = f"the verifier crashed: {type(exc).__name__}", "internal", EXIT_CRASH
    return CallToolResult(content=[TextContent(type="text", text=f"Error: {message}")], is_error=True,
                          structured_content={"ok": False, "code": code, "exit_code": exit_code, "message": message})


def guarded(tool: str, action: Callable[[], Mapping[str, JsonValue]]) -> CallToolResult:
    """Run a tool's body: its value as the result, any error as a tool error (the server goes on)."""
    try:
        return ok_result(action())
    except Exception as exc:  # every failure is the tool's answer, never the server's end
        return error_result(exc, tool)


def _plain_path(relative: str) -> str:
    try:
        segments(relative)
    except LinkRefused as exc:
        raise FormatError(f"path {relative[:200]!r} refused: a path names a file below the leaf's working folder "
                          "(no absolute path, no `..`, no empty segment)", code="path_outside") from exc
    return relative


def _slice(text: str, offset: int, length: int) -> dict[str, JsonValue]:
    return {"text": text[offset:offset + length], "offset": offset, "total_chars": len(text),
            "next_offset": offset + length if offset + length < len(text) else None}


def build_server(door: Door) -> MCPServer:  # noqa: C901, PLR0915 - one registration per tool
    mcp = MCPServer(name="researchwiki", instructions=INSTRUCTIONS, version=verifier_version(), log_level="WARNING")

    @mcp.tool()
    def board(slug: Slug, state: BoardState = "open") -> CallToolResult:
        """The task board: the project's leaves in a state (open by default)."""
        def run() -> Mapping[str, JsonValue]:
            reply = loop.ok(door.reader().get(f"/projects/{quote(slug)}/leaves", {"state": state}, auth=True))
            return {"slug": slug, "state": state, "leaves": reply.body.get("leaves", [])}
        return guarded("board", run)

    @mcp.tool()
    def work(slug: Slug, leaf_id: LeafId | None = None, level: Level = "L2",
             ttl_minutes: Annotated[int, Strict(), Field(ge=1, le=24 * 60)] = CLAIM_TTL_S // 60) -> CallToolResult:
        """Claim a leaf (or, without leaf_id, a warm extract leaf), clone the project at its base into a
        working folder, write its payload and sources beside it, start the trace."""
        def run() -> Mapping[str, JsonValue]:
            client = door.client()
            warning = loop.served_version_warning(client, verifier_version())
            made = loop.start_work(client, door.server, slug, leaf_id, parent=door.root, level=level,
                                   ttl_s=ttl_minutes * 60)
            state = made.state
            return {"leaf_id": state.leaf_id, "kind": state.kind, "folder": str(made.root),
                    "base_revision": state.base_revision, "sources": state.source_ids, "agent": state.agent,
                    "payload": f"{STATE_DIR}/payload.json", "warning": warning,
                    "next": "read_payload, read_source, new_finding (or the leaf kind's object), check, submit"}
        return guarded("work", run)

    @mcp.tool()
    def read_payload(leaf_id: LeafId) -> CallToolResult:
        """The leaf's payload as the service served it: its contract, inputs and Field Guide."""
        return guarded("read_payload", lambda: {"leaf_id": leaf_id, "payload": door.work(leaf_id).payload()})

    @mcp.tool()
    def read_source(leaf_id: LeafId, source_id: SourceId | None = None, offset: Offset = 0,
                    length: Length = MCP_MAX_READ) -> CallToolResult:
        """The exact derived text of a source of the leaf (what an excerpt must quote), a slice at a time."""
        def run() -> Mapping[str, JsonValue]:
            here = door.work(leaf_id)
            chosen = source_id or (here.state.source_ids[0] if len(here.state.source_ids) == 1 else None)
            if chosen is None:
                raise FormatError(f"this leaf has {len(here.state.source_ids)} sources "
                                  f"({', '.join(here.state.source_ids) or 'none'}); name one")
            try:
                text = here.source_text(chosen)
            except FileNotFoundError as exc:
                raise FormatError(str(exc)) from exc
            return {"source_id": chosen, **_slice(text, offset, length)}
        return guarded("read_source", run)

    @mcp.tool()
    def read_file(leaf_id: LeafId, path: RelPath, offset: Offset = 0, length: Length = MCP_MAX_READ) -> CallToolResult:
        """A text file of the leaf's working folder (the clone, or `.rw/`), a slice at a time."""
        def run() -> Mapping[str, JsonValue]:
            here = door.work(leaf_id)
            try:
                data = read_bytes(here.root, _plain_path(path))
            except (FileNotFoundError, IsADirectoryError) as exc:
                raise FormatError(f"no file {path!r} in the working folder of {leaf_id}") from exc
            return {"path": path, **_slice(data.decode("utf-8", "replace"), offset, length)}
        return guarded("read_file", run)

    @mcp.tool()
    def new_finding(leaf_id: LeafId, excerpt: Text, statement: Text, limitation: Text,
                    source_id: SourceId | None = None) -> CallToolResult:
        """A finding quoting the source exactly; refuses an excerpt that is not in the text, or shorter
        than the project asks (PROJECT.md min_excerpt_chars)."""
        return guarded("new_finding", lambda: {"wrote": loop.add_finding(
            door.work(leaf_id), excerpt=excerpt, statement=statement, limitation=limitation, source_id=source_id)})

    @mcp.tool()
    def new_source(leaf_id: LeafId, url: Short, file: RelPath, media_type: MediaType, language: Short,
                   rights: Short, published: date | None = None, title: Short | None = None) -> CallToolResult:
        """A source record and its retained bytes (scout leaves); `file` holds the bytes as fetched,
        below the working folder."""
        def run() -> Mapping[str, JsonValue]:
            here = door.work(leaf_id)
            try:
                data = read_bytes(here.root, _plain_path(file))
            except (FileNotFoundError, IsADirectoryError) as exc:
                raise FormatError(f"no file {file!r} in the working folder of {leaf_id}") from exc
            return {"wrote": loop.add_source(here, url=url, data=data, media_type=media_type, language=language,
                                             rights=rights, published=published, title=title)}
        return guarded("new_source", run)

    @mcp.tool()
    def new_link(leaf_id: LeafId, finding_id: Short, stance: Stance, rationale: Text,
                 hypothesis_id: Short | None = None,
                 revision: Annotated[int, Strict(), Field(ge=1, le=1_000_000)] | None = None) -> CallToolResult:
        """A link from a finding to a hypothesis (skeptic and link leaves); the leaf's hypothesis by default."""
        return guarded("new_link", lambda: {"wrote": loop.add_link(
            door.work(leaf_id), finding_id=finding_id, stance=stance, rationale=rationale,
            hypothesis_id=hypothesis_id, revision=revision)})

    @mcp.tool()
    def new_note(leaf_id: LeafId, sources: Annotated[list[SourceId], Field(min_length=1, max_length=100)],
                 scout_requests: Annotated[list[Short], Field(max_length=20)] | None = None) -> CallToolResult:
        """The "none found after N sources" note of a skeptic or link leaf, listing every source searched."""
        return guarded("new_note", lambda: {"wrote": loop.add_note(
            door.work(leaf_id), sources=sources, requests=scout_requests or [])})

    @mcp.tool()
    def new_review(leaf_id: LeafId, decision: Literal["accept", "reject", "amend"], reason: Text,
                   object_path: RelPath | None = None, amend_statement: Text | None = None,
                   amend_limitation: Text | None = None, amend_stance: Stance | None = None) -> CallToolResult:
        """A review of the leaf's object: accept, reject or amend (with the amended fields), with the reason."""
        amendment = {key: value for key, value in (("statement", amend_statement), ("limitation", amend_limitation),
                                                   ("stance", amend_stance)) if value is not None}
        return guarded("new_review", lambda: {"wrote": loop.add_review(
            door.work(leaf_id), decision=decision, reason=reason,
            object_path=_plain_path(object_path) if object_path is not None else None, amendment=amendment)})

    @mcp.tool()
    def new_guide_line(leaf_id: LeafId, text: Text, replace: Text | None = None) -> CallToolResult:
        """A Field Guide line attributed to you (guide leaves), added or replacing an exact line."""
        return guarded("new_guide_line", lambda: {"wrote": loop.add_guide_line(door.work(leaf_id), text=text,
                                                                              old=replace)})

    @mcp.tool()
    def trace(leaf_id: LeafId, kind: EventKind, text: Text) -> CallToolResult:
        """Append one event to the leaf's trace (reasoning, tool_call, tool_result or final); secrets stripped."""
        def run() -> Mapping[str, JsonValue]:
            recorded = loop.trace_of(door.work(leaf_id)).add(loop.now_iso(), kind, text)
            return {"recorded": recorded.event is not None, "stripped": sorted(set(recorded.stripped))}
        return guarded("trace", run)

    @mcp.tool()
    def check(leaf_id: LeafId) -> CallToolResult:
        """Run the leaf kind's checks on the working folder, as the verifier will (same codes)."""
        def run() -> Mapping[str, JsonValue]:
            here = door.work(leaf_id)
            try:
                result = run_checks(here, datetime.now(UTC).replace(microsecond=0), current_skill_version())
            except RuntimeError as exc:
                raise FormatError(str(exc)) from exc
            return {**result_json(result), "lines": [f"{p.line()} (trace)" for p in result.trace_problems]
                    + [r.line() for r in result.rejections]}
        return guarded("check", run)

    @mcp.tool()
    def submit(leaf_id: LeafId, summary: Text | None = None) -> CallToolResult:
        """Submit the working folder: its patch against the base and its trace. The verdict comes back."""
        def run() -> Mapping[str, JsonValue]:
            here = door.work(leaf_id)
            client = door.client(SUBMIT_RETRY_S)
            done = loop.submit_folder(client, here, summary)
            return {"submission_id": done.submission_id, "outcome": done.verdict.get("outcome"),
                    "verdict": done.verdict, "same_attempt": done.replayed,
                    "messages": loop.leaf_messages(client, here)}
        return guarded("submit", run)

    @mcp.tool()
    def outcome(submission_id: Annotated[str, Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9_-]+$")]
                ) -> CallToolResult:
        """The state and verdict of one of your submissions."""
        return guarded("outcome", lambda: loop.ok(door.client().get(f"/submissions/{quote(submission_id)}")).body)

    @mcp.tool()
    def messages(after: Annotated[int, Strict(), Field(ge=0, le=2**62)] = 0) -> CallToolResult:
        """Your inbox: the first-minute message and the return triggers."""
        return guarded("messages", lambda: loop.ok(door.client().get("/messages", {"after": after})).body)

    @mcp.tool()
    def release(slug: Slug, leaf_id: LeafId) -> CallToolResult:
        """Release your claim on a leaf."""
        return guarded("release", lambda: {"released": f"{slug}/{leaf_id}", **loop.ok(door.client().request(
            "DELETE", f"/projects/{quote(slug)}/leaves/{quote(leaf_id)}/claim")).body})

    @mcp.prompt(name="researchwiki", title="The ResearchWiki skill")
    def skill_prompt() -> str:
        """The skill an agent follows to do a leaf well (skill/SKILL.md)."""
        return _skill_text()

    @mcp.resource("researchwiki://skill", name="skill", mime_type="text/markdown")
    def skill_resource() -> str:
        """The researchwiki skill (skill/SKILL.md)."""
        return _skill_text()

    return mcp


def _skill_text() -> str:
    try:
        return skill_path().read_text(encoding="utf-8")
    except OSError:
        return ("The skill file is not on this machine; read it from the service's documentation "
                "(skill/SKILL.md). Tools: board, work, read_payload, read_source, new_finding, check, submit.")


def serve_stdio(server: str, root: Path) -> None:
    """Answer MCP over stdin/stdout until the client closes it."""
    build_server(Door(server, os.environ.get("RW_TOKEN", ""), root.resolve())).run("stdio")
