"""An MCP client on `rw mcp`, spawned as its own process over stdio with the SDK's own client.

`session(...)` opens it (initialised) for an async scenario; `call(...)` runs one tool and hands
back its result with the JSON the tool answered (`structured`), or its error text."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, TextContent

from tests.support.agent import RW


@dataclass(frozen=True)
class ToolAnswer:
    is_error: bool
    text: str
    structured: Mapping[str, object]


def mcp_env(token: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("RW_")}
    env.update({"RW_TOKEN": token, "GIT_TERMINAL_PROMPT": "0"})
    return env


@asynccontextmanager
async def session(server_url: str, token: str, folder: Path) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=RW, args=["mcp", "--server", server_url, "--dir", str(folder)],
                                   env=mcp_env(token), cwd=str(folder.parent))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        yield client


def answer_of(result: CallToolResult) -> ToolAnswer:
    text = "".join(block.text for block in result.content if isinstance(block, TextContent))
    return ToolAnswer(bool(result.is_error), text, dict(result.structured_content or {}))


async def call(client: ClientSession, tool: str, arguments: Mapping[str, object]) -> ToolAnswer:
    return answer_of(await client.call_tool(tool, dict(arguments)))
