"""MCP requests: server status, direct tool calls and resource reads, config reload and OAuth login.

The logic lives in ``app_server.mcp.service``; these handlers check thread ids the way every thread request
does and turn ``McpRequestError`` into the JSON-RPC error Codex 0.169 answers with
(tests/data/mcp/codex_0169_app_server.json).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from pydantic import BaseModel

from app_server.context import HandlerContext
from app_server.mcp.params import (
    ListMcpServerStatusParams,
    McpRequestError,
    McpResourceReadParams,
    McpServerEventStreamStartParams,
    McpServerEventStreamStopParams,
    McpServerOauthLoginParams,
    McpServerToolCallParams,
    missing_field,
)
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InvalidRequest, RpcError

__all__ = [
    "event_stream_start", "event_stream_stop", "oauth_login", "reload", "resource_read", "status_list",
    "tool_call",
]

P = TypeVar("P")


def _check_thread(ctx: HandlerContext, thread_id: str | None) -> str | None:
    """The canonical id of a loaded thread (malformed or unknown ids fail as for any thread request)."""
    if thread_id is None:
        return None
    return ctx.services.threads.get_loaded(thread_id).id


async def _answer(call: Callable[[P], Awaitable[JsonObj]], params: P) -> JsonObj:
    try:
        return await call(params)
    except McpRequestError as exc:
        raise RpcError(exc.message, code=exc.code) from None


async def status_list(ctx: HandlerContext, params: ListMcpServerStatusParams | None) -> JsonObj:
    params = params or ListMcpServerStatusParams()
    params = params.model_copy(update={"threadId": _check_thread(ctx, params.threadId)})
    return await _answer(ctx.services.mcp.list_status, params)


class _ToolCallParams(McpServerToolCallParams):
    """Parsed with `threadId` optional, so its absence gets the -32600 Codex answers (not the generic -32602)."""

    threadId: str | None = None  # type: ignore[assignment]


async def tool_call(ctx: HandlerContext, params: _ToolCallParams) -> JsonObj:
    if params.threadId is None:
        raise InvalidRequest("Invalid request: missing field `threadId`")
    checked = McpServerToolCallParams.model_validate(
        {**params.model_dump(by_alias=True), "threadId": _check_thread(ctx, params.threadId)})
    return await _answer(ctx.services.mcp.tool_call, checked)


async def resource_read(ctx: HandlerContext, params: McpResourceReadParams) -> JsonObj:
    params = params.model_copy(update={"threadId": _check_thread(ctx, params.threadId)})
    return await _answer(ctx.services.mcp.resource_read, params)


async def reload(ctx: HandlerContext, params: None) -> JsonObj:
    """Re-read config.toml, then every loaded thread reconciles its servers with it."""
    services = ctx.services
    services.reload_config()
    return await services.mcp.reload()


async def oauth_login(ctx: HandlerContext, params: McpServerOauthLoginParams) -> JsonObj:
    return await _answer(ctx.services.mcp.oauth_login, params)


HOSTED_ONLY = "MCP event subscriptions are only supported for hosted apps"


def _require(params: BaseModel, fields: tuple[str, ...]) -> None:
    missing = missing_field(params, fields)
    if missing is not None:
        raise InvalidRequest(f"Invalid request: missing field `{missing}`")


async def event_stream_start(ctx: HandlerContext, params: McpServerEventStreamStartParams) -> JsonObj:
    """Codex 0.169 serves event streams for hosted apps only; any configured server (and any thread id,
    known or not) gets this refusal."""
    _require(params, ("threadId", "server", "name", "arguments", "subscriptionId"))
    raise InvalidRequest(HOSTED_ONLY)


async def event_stream_stop(ctx: HandlerContext, params: McpServerEventStreamStopParams) -> JsonObj:
    """Nothing is ever subscribed, so stopping any id succeeds, as in Codex 0.169."""
    _require(params, ("subscriptionId",))
    return {}
