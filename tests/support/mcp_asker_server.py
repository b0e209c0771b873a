"""A stdio MCP server whose one tool, `ask`, sends its own elicitation (`elicitation/create`) and returns
"<action>:<data>", so tests see how the client answered. Kept apart from mcp_calc_server.py, whose tool
list the Codex recordings pin."""

from __future__ import annotations

from mcp.server.fastmcp import Context, FastMCP
from pydantic import BaseModel


class Answer(BaseModel):
    name: str


def build() -> FastMCP:
    server = FastMCP("asker", log_level="WARNING")

    @server.tool(description="Asks the user for a name.")
    async def ask(ctx: Context) -> str:  # type: ignore[type-arg]
        result = await ctx.elicit(message="What is your name?", schema=Answer)
        return f"{result.action}:{getattr(result, 'data', None)}"

    return server


if __name__ == "__main__":
    build().run("stdio")
