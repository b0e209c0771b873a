"""A real MCP server for the tests, written with the `mcp` SDK's FastMCP.

Tools: `add` (read-only hint), `echo` (plain text content, no structured output), `slow` (waits on an event
that never fires, so a tool timeout is the only way out), `fail` (raises), `describe` (a rich input schema:
descriptions, an enum, defaults, optional and nested-model parameters). Resource: `calc://greeting`.

    python tests/support/mcp_calc_server.py stdio
    python tests/support/mcp_calc_server.py http            # streamable HTTP on 127.0.0.1:PORT/mcp
    python tests/support/mcp_calc_server.py stdio MARKER empty-resources   # answers resources/list with {}

Over HTTP it binds a free port itself and prints it alone on stdout's first line (no port race).
"""

from __future__ import annotations

import asyncio
import socket
import sys
from typing import Literal

import uvicorn
from mcp import types
from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

GREETING = "hello from calc"


class Where(BaseModel):
    """A nested model, so the input schema has `$defs` and a `$ref`."""

    city: str = Field(description="City name")
    zip_code: int | None = None


def build() -> FastMCP:
    server = FastMCP("calc", log_level="WARNING")

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

    @server.tool(description="Takes a rich input schema; says what it got.")
    def describe(
        name: str = Field(description="Who is asking"),
        mode: Literal["short", "long"] = "short",
        tags: list[str] | None = None,
        count: int = 1,
        where: Where | None = None,
    ) -> str:
        return f"{name}:{mode}:{tags}:{count}:{where}"

    @server.resource("calc://greeting", name="greeting", mime_type="text/plain")
    def greeting() -> str:
        return GREETING

    return server


async def serve_http() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)  # listening before the port is printed, so a client may connect at once
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(build().streamable_http_app(), log_level="warning")
    await uvicorn.Server(config).serve(sockets=[sock])


def _answer_resources_list_with_nothing(server: FastMCP) -> None:
    """A broken server: ``resources/list`` answers ``{}`` (no ``resources`` array)."""

    async def nothing(request: types.ListResourcesRequest) -> types.ServerResult:
        return types.ServerResult(types.EmptyResult())

    server._mcp_server.request_handlers[types.ListResourcesRequest] = nothing


def main(argv: list[str]) -> None:
    if argv and argv[0] == "http":
        asyncio.run(serve_http())
    else:
        server = build()
        if "empty-resources" in argv:
            _answer_resources_list_with_nothing(server)
        server.run(transport="stdio")


if __name__ == "__main__":
    main(sys.argv[1:])
