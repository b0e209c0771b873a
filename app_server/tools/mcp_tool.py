"""Model calls to MCP tools: a `function_call` in an `mcp__<server>` namespace, run on the thread's servers.

The order follows Codex 0.169 (tests/data/mcp/codex_0169_app_server.json): `item/started` for the
`mcpToolCall` item, then the approval decision (`app_server.mcp.approval`: run, ask the client with
`mcpServer/elicitation/request`, or refuse under `approval_policy = "never"`), then the call and
`item/completed`. The model gets the result (or the refusal or failure text) as the call's output.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

from mcp.types import Tool

from app_server.config.mcp_servers import ApprovalMode
from app_server.config.write import ConfigEdit, write_values
from app_server.mcp.approval import (
    ELICITATION_METHOD,
    Answer,
    Decision,
    approval_request_params,
    decide,
    parse_approval_response,
)
from app_server.mcp.client import McpCallError
from app_server.mcp.tools import ToolRoute, call_output, error_output, parse_arguments, tool_call_item
from app_server.protocol import notices
from app_server.store import new_uuid7
from app_server.threads import items as it
from app_server.tools.ask import NoAnswer, ask_clients
from app_server.tools.contracts import ToolOutcome
from pycodex.json_types import JsonObj

if TYPE_CHECKING:
    from app_server.mcp.manager import McpConnectionManager
    from app_server.mcp.service import ThreadMcp
    from app_server.threads.sampling import ToolCall
    from app_server.tools.contracts import ToolContext

__all__ = ["CANCELLED_MESSAGE", "DECLINED_MESSAGE", "handle_mcp_call"]

logger = logging.getLogger(__name__)

#: Codex 0.169's texts for a declined or cancelled approval (the turn goes on either way).
DECLINED_MESSAGE = "user rejected MCP tool call"
CANCELLED_MESSAGE = "user cancelled MCP tool call"


async def handle_mcp_call(ctx: ToolContext, mcp: ThreadMcp, call: ToolCall) -> ToolOutcome | None:
    """Run ``call`` if it names a tool of one of the thread's MCP servers; None if it does not."""
    manager = mcp.manager
    route = manager.routes().resolve(call.namespace, call.name) if manager is not None else None
    return None if manager is None or route is None else await _call(ctx, mcp, manager, call, route)


def _outcome(call: ToolCall, output: str | list[JsonObj]) -> ToolOutcome:
    return ToolOutcome({"type": "function_call_output", "id": f"fco_{new_uuid7()}", "call_id": call.call_id,
                        "output": output})


async def _call(
    ctx: ToolContext, mcp: ThreadMcp, manager: McpConnectionManager, call: ToolCall, route: ToolRoute
) -> ToolOutcome:
    thread, turn = ctx.thread, ctx.turn
    t0 = time.monotonic()
    started_ms = it.now_ms()
    try:
        arguments = parse_arguments(call.arguments)
        bad_arguments = None
    except ValueError as exc:
        arguments, bad_arguments = None, f"failed to parse function arguments: {exc}"
    tool = manager.find_tool(route.server, route.tool)
    item = tool_call_item(call.call_id, route, arguments, tool, started_at_ms=started_ms)
    await thread.emit(notices.item_started(item, thread.id, turn.id))

    async def fail(message: str, *, called_at: float | None = None) -> ToolOutcome:
        """The item fails; `durationMs` counts only a call that was made (0 for a refusal, as Codex)."""
        now = time.monotonic()
        duration_ms = 0 if called_at is None else int((now - called_at) * 1000)
        await ctx.complete_item(tool_call_item(call.call_id, route, arguments, tool, started_at_ms=started_ms,
                                               error=message, completed_at_ms=it.now_ms(), duration_ms=duration_ms))
        wall = now - t0
        return _outcome(call, error_output(message, wall))

    if bad_arguments is not None:
        return await fail(bad_arguments)
    config = manager.configs.get(route.server)
    if config is None or tool is None:  # reloaded away since the request was built
        return await fail(f"unknown MCP server '{route.server}'")
    if route not in mcp.approved:
        mode = config.approval_mode(route.tool)
        outcome = decide(thread.settings.approval_policy, mode, tool.annotations)
        if outcome.decision is Decision.REFUSE:
            return await fail(outcome.message or "MCP tool call refused")
        if outcome.decision is Decision.ASK:
            answer = await _ask(ctx, route, tool, arguments, mode)
            if answer is Answer.DECLINE:
                return await fail(DECLINED_MESSAGE)
            if answer is Answer.CANCEL:
                return await fail(CANCELLED_MESSAGE)
            if answer is Answer.ACCEPT_FOR_SESSION:
                mcp.approved.add(route)
            elif answer is Answer.ACCEPT_AND_REMEMBER:
                mcp.approved.add(route)
                await _remember(ctx, route)
    called_at = time.monotonic()  # Codex's durationMs is the call's own time, not the approval wait
    try:
        result = await manager.call_tool(route.server, route.tool, arguments)
    except McpCallError as exc:
        return await fail(str(exc), called_at=called_at)
    now = time.monotonic()
    await ctx.complete_item(tool_call_item(call.call_id, route, arguments, tool, started_at_ms=started_ms,
                                           result=result, completed_at_ms=it.now_ms(),
                                           duration_ms=int((now - called_at) * 1000)))
    return _outcome(call, call_output(result, now - t0))


async def _ask(ctx: ToolContext, route: ToolRoute, tool: Tool, arguments: JsonObj | None,
               mode: ApprovalMode) -> Answer:
    """Ask the turn's client (then the thread's other clients) whether the call may run; no answer declines."""
    thread, turn = ctx.thread, ctx.turn
    params = approval_request_params(thread.id, turn.id, route.server, tool, arguments, mode)
    try:
        answer = await ask_clients(ctx, ELICITATION_METHOD, params, lambda result: parse_approval_response(result, mode))
    except NoAnswer as exc:
        if exc.nobody:
            return Answer.DECLINE
        logger.info("MCP approval for %s/%s ended without a decision: %s", route.server, route.tool, exc.cause)
        answer = Answer.DECLINE
    await thread.emit_status()
    return answer


async def _remember(ctx: ToolContext, route: ToolRoute) -> None:
    """"Always allow": persist `[mcp_servers.S.tools.T] approval_mode = "approve"` as Codex does."""
    home = ctx.thread.codex_home
    if home is None:
        return
    try:
        edit = ConfigEdit(f"mcp_servers.{route.server}.tools.{route.tool}.approval_mode", "approve")
        await asyncio.to_thread(write_values, home / "config.toml", [edit], codex_home=home)
    except Exception:  # the call still runs; only the memory of the approval is lost
        logger.exception("could not remember the approval of %s/%s", route.server, route.tool)
