"""The turn's tool router: which tool module answers a model call.

MCP calls (a function in an `mcp__<server>` namespace of the thread's servers) go to ``mcp_tool``, imported
on the first such call so that a server without MCP use never loads the MCP SDK. The top-level tools each
have one module: ``apply_patch`` (freeform or function form) ``patch_tool``, ``view_image`` ``images``,
``request_user_input`` ``user_input``, the goal tools ``goal_tool``, the ``multi_agent_v1``
namespace ``collab_tool``; everything else (exec_command,
write_stdin, skills, and the "unsupported call" answer) goes to ``exec_tool``. A ``tool_search_call`` goes
to ``tool_search``. In code mode the model's ``exec``, ``wait``, ``request_user_input_async`` and
``clock.sleep`` go to ``code_mode.handler``, whose scripts' nested calls come back through here; the
``functions`` namespace of code mode is the top level.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from app_server.lazy import LazyModule
from app_server.tools.code_mode.handler import handle_code_mode_call, is_code_mode_call
from app_server.tools.collab_tool import handle_collab_call
from app_server.tools.exec_tool import handle_tool_call
from app_server.tools.goal_tool import GOAL_TOOLS, handle_goal_call
from app_server.tools.images import view_image
from app_server.tools.patch_tool import handle_apply_patch
from app_server.tools.specs_collab import MULTI_AGENT_NAMESPACE
from app_server.tools.tool_search import handle_tool_search
from app_server.tools.user_input import handle_request_user_input
from pycodex import otel

if TYPE_CHECKING:
    from app_server.threads.sampling import ToolCall
    from app_server.tools import mcp_tool as tools_mcp_tool
    from app_server.tools.code_mode.specs import CodeModeTools
    from app_server.tools.contracts import ToolContext, ToolOutcome, ToolRouter
else:
    tools_mcp_tool = LazyModule("app_server.tools.mcp_tool")

__all__ = ["MCP_NAMESPACE_PREFIX", "route_tool_call", "tool_router"]

MCP_NAMESPACE_PREFIX = "mcp__"  # app_server.mcp.tools.NAMESPACE_PREFIX, without importing the SDK


def tool_router(*, ask_user: bool, code_mode: CodeModeTools | None = None) -> ToolRouter:
    """The router of one turn; ``ask_user``: whether request_user_input may ask (its collaboration mode);
    ``code_mode``: a code-mode model's tools (None: direct tools)."""

    async def route(ctx: ToolContext, call: ToolCall) -> ToolOutcome:
        if call.namespace == "functions":  # code mode's top-level namespace
            call = dataclasses.replace(call, namespace=None)
        if code_mode is not None and is_code_mode_call(call, code_mode):
            return await handle_code_mode_call(ctx, call, nested, code_mode)
        return await route_tool_call(ctx, call, ask_user=ask_user)

    async def nested(ctx: ToolContext, call: ToolCall) -> ToolOutcome:  # a script's call: never exec or wait
        return await otel.tool_call(call.name, call.call_id, route_tool_call(ctx, call, ask_user=ask_user))

    return route


async def route_tool_call(ctx: ToolContext, call: ToolCall, *, ask_user: bool = False) -> ToolOutcome:
    """Run one tool call with the module that owns its name (see the module docstring)."""
    if call.tool_search:
        return await handle_tool_search(ctx, call)
    if call.name == "apply_patch" and not call.namespace:
        return await handle_apply_patch(ctx, call)
    mcp = ctx.thread.services.mcp
    if mcp is not None and not call.custom and (call.namespace or "").startswith(MCP_NAMESPACE_PREFIX):
        outcome = await tools_mcp_tool.handle_mcp_call(ctx, mcp, call)
        if outcome is not None:
            return outcome
    if not call.custom and call.namespace == MULTI_AGENT_NAMESPACE:
        return await handle_collab_call(ctx, call)
    if not call.custom and not call.namespace:
        if call.name == "request_user_input":
            return await handle_request_user_input(ctx, call, allowed=ask_user)
        if call.name == "view_image":
            return await view_image(ctx, call)
        if call.name in GOAL_TOOLS:
            return await handle_goal_call(ctx, call)
    return await handle_tool_call(ctx, call)
