"""A real MCP server for the tests, written with the `mcp` SDK's FastMCP.

Tools: `add` (read-only hint), `echo` (plain text content, no structured output), `slow` (waits on an event that never fires, so a tool timeout is
the only way out), `fail` (raises). Resource: `calc://greeting`.

    python tests/support/mcp_calc_server.py stdio
    python tests/support/mcp_calc_server.py http PORT      # streamable HTTP on 127.0.0.1:PORT/mcp
"""

from __future__ import annotations

import asyncio
import sys

from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

GREETING = "hello from calc"


def build(port: int = 0) -> FastMCP:
    server = FastMCP("calc", host="127.0.0.1", port=port, log_level="WARNING")

    @server.tool(description="Add two integers.", annotations=ToolAnnotations(readOnlyHint=True))
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool(description="Echo the text back.", structured_output=False)
    def echo(text: str) -> str:
        return text

    @server.tool(description="Never finishes on its own.")
    async def slow() -> str:
        await asyncio.Event().wait()
        return "unreachable"

    @server.tool(description="Always fails.")
    def fail() -> str:
        raise ValueError("calc failed on purpose")

    @server.resource("calc://greeting", name="greeting", mime_type="text/plain")
    def greeting() -> str:
        return GREETING

    return server


def main(argv: list[str]) -> None:
    mode = argv[0] if argv else "stdio"
    if mode == "http":
        build(int(argv[1])).run(transport="streamable-http")
    else:
        build().run(transport="stdio")


if __name__ == "__main__":
    main(sys.argv[1:])
