"""`rw mcp` spoken to by the MCP SDK's own client over stdio, the server a real `rw mcp` process and
the service a real `rw serve` on loopback with the demo project: an agent reaches an ACCEPTED
extract through MCP tools alone, and hostile arguments are tool errors the server survives."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.support.agent import sentences
from tests.support.first_hour import agent_token, copied_initialised, serving
from tests.support.mcp_session import call, session
from verifier.constants import MCP_MAX_TEXT
from verifier.errors import EXIT_REJECTED, EXIT_UNTRUSTED, EXIT_USAGE

pytestmark = pytest.mark.slow
SLUG = "world-model-eval"
LOOP_TOOLS = {"board", "work", "read_payload", "read_source", "read_file", "new_finding", "new_source", "new_link",
              "new_note", "new_review", "new_guide_line", "trace", "check", "submit", "outcome", "messages", "release"}


def test_an_mcp_client_claims_a_warm_leaf_and_reaches_an_accepted_extract(tmp_path: Path) -> None:
    steward = copied_initialised(tmp_path, SLUG, "demo-project")
    folder = tmp_path / "agent"

    async def scenario(url: str, token: str) -> None:
        async with session(url, token, folder) as client:
            assert {tool.name for tool in (await client.list_tools()).tools} >= LOOP_TOOLS
            prompts = await client.list_prompts()
            assert "researchwiki" in {prompt.name for prompt in prompts.prompts}
            skill = await client.get_prompt("researchwiki")
            assert "rw" in json.dumps(skill.model_dump(mode="json"))

            board = await call(client, "board", {"slug": SLUG})
            leaves = board.structured["leaves"]
            assert not board.is_error and isinstance(leaves, list) and any(leaf["kind"] == "extract" for leaf in leaves)
            claimed = await call(client, "work", {"slug": SLUG})
            assert not claimed.is_error, claimed.text
            leaf_id = str(claimed.structured["leaf_id"])
            assert claimed.structured["kind"] == "extract" and Path(str(claimed.structured["folder"])) == \
                (folder / leaf_id).resolve()
            payload = await call(client, "read_payload", {"leaf_id": leaf_id})
            assert payload.structured["payload"]["contract"]["leaf_id"] == leaf_id  # type: ignore[index]
            source = await call(client, "read_source", {"leaf_id": leaf_id})
            text = str(source.structured["text"])
            assert source.structured["total_chars"] == len(text) > 0

            missing = await call(client, "new_finding", {"leaf_id": leaf_id, "excerpt": "words the source never said "
                                 "anywhere at all", "statement": "A claim.", "limitation": "None."})
            assert missing.is_error and missing.structured["code"] == "excerpt_not_found"
            assert missing.structured["exit_code"] == EXIT_REJECTED  # what `rw new finding` exits with
            assert missing.text.startswith("Error: the excerpt is not in the text of")
            wrote = [await call(client, "new_finding", {"leaf_id": leaf_id, "excerpt": sentence,
                                                        "statement": f"Claim {number} of the source.",
                                                        "limitation": "One source; not audited."})
                     for number, sentence in enumerate(sentences(text, 3))]
            assert [answer.is_error for answer in wrote] == [False] * 3
            assert all(str(answer.structured["wrote"]).startswith("findings/") for answer in wrote)
            again = await call(client, "new_finding", {"leaf_id": leaf_id, "excerpt": sentences(text, 1)[0],
                                                       "statement": "Claim 0 of the source.",
                                                       "limitation": "One source; not audited."})
            assert again.is_error and "already exists" in again.text and again.structured["exit_code"] == EXIT_USAGE
            await call(client, "trace", {"leaf_id": leaf_id, "kind": "reasoning",
                                         "text": "Three sentences that carry the claims, quoted exactly."})

            checked = await call(client, "check", {"leaf_id": leaf_id})
            assert checked.structured["ok"] is True and checked.structured["trace"] == [], checked.text
            submitted = await call(client, "submit", {"leaf_id": leaf_id, "summary": "Three findings."})
            assert not submitted.is_error and submitted.structured["outcome"] == "accepted", submitted.text
            seen = await call(client, "outcome", {"submission_id": str(submitted.structured["submission_id"])})
            assert seen.structured["verdict"]["outcome"] == "accepted"  # type: ignore[index]
            inbox = await call(client, "messages", {})
            assert not inbox.is_error and isinstance(inbox.structured["messages"], list)

    with serving(steward.home) as server:
        asyncio.run(scenario(server.url, agent_token(steward.home)))
    rows = [json.loads(line) for line in steward.rw("ledger", SLUG, "--json").stdout.splitlines()]
    assert [row["outcome"] for row in rows if row["action"] == "submit"] == ["accepted"]


def test_hostile_tool_arguments_are_tool_errors_and_the_server_keeps_answering(tmp_path: Path) -> None:
    steward = copied_initialised(tmp_path, SLUG, "demo-project")
    folder = tmp_path / "agent"
    outside = tmp_path / "outside"
    outside.mkdir()

    async def scenario(url: str, token: str) -> None:
        async with session(url, token, folder) as client:
            leaf_id = str((await call(client, "work", {"slug": SLUG})).structured["leaf_id"])
            for path in ("../../etc/passwd", ".rw/../../outside/x", "/etc/passwd", "a//b"):
                read = await call(client, "read_file", {"leaf_id": leaf_id, "path": path})
                assert read.is_error and read.structured["code"] == "path_outside", (path, read.text)
            copied = await call(client, "new_source", {"leaf_id": leaf_id, "url": "https://example.org/a",
                                                       "file": "../../outside/x", "media_type": "text/plain",
                                                       "language": "en", "rights": "public"})
            assert copied.is_error and copied.structured["code"] == "path_outside"
            huge = await call(client, "new_finding", {"leaf_id": leaf_id, "excerpt": "x" * 10_000_000,
                                                      "statement": "a", "limitation": "b"})
            assert huge.is_error and f"at most {MCP_MAX_TEXT} characters" in huge.text and len(huge.text) < 2000
            for tool, arguments in (("new_finding", {"leaf_id": leaf_id, "excerpt": 5, "statement": "a",
                                                     "limitation": "b"}),
                                    ("read_source", {"leaf_id": ["x"]}),
                                    ("read_file", {"leaf_id": "../" + leaf_id, "path": "README.md"}),
                                    ("board", {"slug": SLUG, "state": "everything"}),
                                    ("messages", {"after": -1}),
                                    ("read_file", {"leaf_id": leaf_id, "path": "README.md", "length": True}),
                                    ("work", {"slug": {"a": 1}})):
                wrong = await call(client, tool, arguments)
                assert wrong.is_error and "validation error" in wrong.text, (tool, wrong.text)
            unknown = await call(client, "read_payload", {"leaf_id": "extract-none"})
            assert unknown.is_error and "claim it with `work` first" in unknown.text
            # A link planted in the working folder is refused by name, never written through.
            (folder / leaf_id / "findings").symlink_to(outside)
            source = await call(client, "read_source", {"leaf_id": leaf_id})
            linked = await call(client, "new_finding", {"leaf_id": leaf_id,
                                                        "excerpt": sentences(str(source.structured["text"]), 1)[0],
                                                        "statement": "A claim.", "limitation": "One source."})
            assert linked.is_error and linked.structured["exit_code"] == EXIT_UNTRUSTED, linked.text
            assert list(outside.iterdir()) == []
            board = await call(client, "board", {"slug": SLUG, "state": "all"})  # still answering
            assert not board.is_error and board.structured["leaves"]

    with serving(steward.home) as server:
        asyncio.run(scenario(server.url, agent_token(steward.home)))


def test_without_a_token_the_tools_say_so_with_the_cli_exit_code(tmp_path: Path) -> None:
    steward = copied_initialised(tmp_path, SLUG, "demo-project")

    async def scenario(url: str) -> None:
        async with session(url, "", tmp_path / "agent") as client:
            refused = await call(client, "work", {"slug": SLUG})
            assert refused.is_error and refused.structured["exit_code"] == 3 and "RW_TOKEN" in refused.text
            board = await call(client, "board", {"slug": SLUG})  # reading needs no token
            assert not board.is_error

    with serving(steward.home) as server:
        asyncio.run(scenario(server.url))
