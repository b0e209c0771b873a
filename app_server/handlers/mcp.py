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
from app_server.protocol import responses_config as rc
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InvalidRequest, RpcError

__all__ = [
    "event_stream_start", "event_stream_stop", "oauth_login", "reload", "resource_read", "status_list",
    "tool_call",
]

P = TypeVar("P")
R = TypeVar("R", bound=BaseModel)


def _check_thread(ctx: HandlerContext, thread_id: str | None) -> str | None:
    """The canonical id of a loaded thread (malformed or unknown ids fail as for any thread request)."""
    if thread_id is None:
        return None
    return ctx.services.threads.get_loaded(thread_id).id


async def _answer(call: Callable[[P], Awaitable[JsonObj]], params: P, model: type[R]) -> R:
    try:
        answer = await call(params)
    except McpRequestError as exc:
        raise RpcError(exc.message, code=exc.code) from None
    return model.model_validate(answer)


async def status_list(
    ctx: HandlerContext, params: ListMcpServerStatusParams | None
) -> rc.ListMcpServerStatusResponse:
    params = params or ListMcpServerStatusParams()
    params = params.model_copy(update={"threadId": _check_thread(ctx, params.threadId)})
    return await _answer(ctx.services.mcp.list_status, params, rc.ListMcpServerStatusResponse)


class _ToolCallParams(McpServerToolCallParams):
    """Parsed with `threadId` optional, so its absence gets the -32600 Codex answers (not the generic -32602)."""

    threadId: str | None = None  # type: ignore[assignment]


async def tool_call(ctx: HandlerContext, params: _ToolCallParams) -> rc.McpServerToolCallResponse:
    if params.threadId is None:
        raise InvalidRequest("Invalid request: missing field `threadId`")
    checked = McpServerToolCallParams.model_validate(
        {**params.model_dump(by_alias=True), "threadId": _check_thread(ctx, params.threadId)})
    return await _answer(ctx.services.mcp.tool_call, checked, rc.McpServerToolCallResponse)


async def resource_read(ctx: HandlerContext, params: McpResourceReadParams) -> rc.McpResourceReadResponse:
    params = params.model_copy(update={"threadId": _check_thread(ctx, params.threadId)})
    return await _answer(ctx.services.mcp.resource_read, params, rc.McpResourceReadResponse)


async def reload(ctx: HandlerContext, params: None) -> rc.McpServerRefreshResponse:
    """Re-read config.toml, then every loaded thread reconciles its servers with it."""
    services = ctx.services
    services.reload_config()
    await services.mcp.reload()
    return rc.McpServerRefreshResponse()


async def oauth_login(ctx: HandlerContext, params: McpServerOauthLoginParams) -> rc.McpServerOauthLoginResponse:
    return await _answer(ctx.services.mcp.oauth_login, params, rc.McpServerOauthLoginResponse)


HOSTED_ONLY = "MCP event subscriptions are only supported for hosted apps"


def _require(params: BaseModel, fields: tuple[str, ...]) -> None:
    missing = missing_field(params, fields)
    if missing is not None:
        raise InvalidRequest(f"Invalid request: missing field `{missing}`")


async def event_stream_start(
    ctx: HandlerContext, params: McpServerEventStreamStartParams
) -> rc.McpServerEventStreamStartResponse:
    """Codex 0.169 serves event streams for hosted apps only; any configured server (and any thread id,
    known or not) gets this refusal."""
    _require(params, ("threadId", "server", "name", "arguments", "subscriptionId"))
    raise InvalidRequest(HOSTED_ONLY)


async def event_stream_stop(
    ctx: HandlerContext, params: McpServerEventStreamStopParams
) -> rc.McpServerEventStreamStopResponse:
    """Nothing is ever subscribed, so stopping any id succeeds, as in Codex 0.169."""
    _require(params, ("subscriptionId",))
    return rc.McpServerEventStreamStopResponse()
