"""The turn's tool router: which tool module answers a model call.

MCP calls (a function in an `mcp__<server>` namespace of the thread's servers) go to ``mcp_tool``, imported
on the first such call so that a server without MCP use never loads the MCP SDK; everything else goes to
``exec_tool``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app_server.loading import tools_mcp_tool
from app_server.tools.exec_tool import handle_tool_call
from app_server.tools.goal_tool import GOAL_TOOLS, handle_goal_call

if TYPE_CHECKING:
    from app_server.threads.sampling import ToolCall
    from app_server.tools.contracts import ToolContext, ToolOutcome

__all__ = ["MCP_NAMESPACE_PREFIX", "route_tool_call"]

MCP_NAMESPACE_PREFIX = "mcp__"  # app_server.mcp.tools.NAMESPACE_PREFIX, without importing the SDK


async def route_tool_call(ctx: ToolContext, call: ToolCall) -> ToolOutcome:
    """Run one tool call: an MCP tool if its namespace names one, else exec_command, write_stdin or skills."""
    mcp = ctx.thread.services.mcp
    if mcp is not None and not call.custom and (call.namespace or "").startswith(MCP_NAMESPACE_PREFIX):
        outcome = await tools_mcp_tool.handle_mcp_call(ctx, mcp, call)
        if outcome is not None:
            return outcome
    if not call.custom and not call.namespace and call.name in GOAL_TOOLS:
        return await handle_goal_call(ctx, call)
    return await handle_tool_call(ctx, call)
