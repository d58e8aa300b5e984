"""The Model Context Protocol face: `rw mcp` serves the agent's loop as MCP tools (docs/mcp.md)."""
