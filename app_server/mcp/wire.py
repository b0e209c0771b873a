"""App-server v2 wire models for MCP (Codex 0.169 schema), and builders from the manager's state.

Requests: `mcpServerStatus/list` (ListMcpServerStatusParams -> ListMcpServerStatusResponse),
`mcpServer/oauth/login` (McpServerOauthLoginParams; refused for now),
`mcpServer/tool/call` (McpServerToolCallParams -> McpServerToolCallResponse), `mcpServer/resource/read`
(McpResourceReadParams -> McpResourceReadResponse), `config/mcpServer/reload` (no params -> `{}`).
Notification: `mcpServer/startupStatus/updated` (McpServerStatusUpdatedNotification). The params models
live in `params.py` (the handlers import them at start-up, without the MCP SDK).
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

from mcp.types import CallToolResult, ReadResourceResult, Resource
from pydantic import BaseModel

from app_server.config.mcp_servers import HttpTransport
from app_server.mcp.manager import ServerSnapshot
from app_server.protocol import notices
from pycodex.json_types import JsonObj

STATUS_METHOD = "mcpServer/startupStatus/updated"

McpServerConnectionStatus = Literal[
    "notStarted", "starting", "connected", "authenticationRequired", "failed", "cancelled", "disabled"
]
McpAuthStatus = Literal["unknown", "unsupported", "notLoggedIn", "bearerToken", "oAuth"]
_RUNTIME: dict[str, McpServerConnectionStatus] = {
    "notStarted": "notStarted", "starting": "starting", "ready": "connected", "failed": "failed",
    "cancelled": "cancelled", "disabled": "disabled",
}


def _http_origin(snapshot: ServerSnapshot) -> str | None:
    transport = snapshot.config.transport
    if not isinstance(transport, HttpTransport):
        return None
    parts = urlsplit(transport.url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port is not None else ""
    return f"{parts.scheme}://{host}{port}"


def auth_status(snapshot: ServerSnapshot) -> McpAuthStatus:
    """stdio servers have no auth; an HTTP server with a bearer token variable is "bearerToken" (as
    `codex mcp list` shows); other HTTP servers would need OAuth, which pycodex does not do yet."""
    transport = snapshot.config.transport
    if not isinstance(transport, HttpTransport):
        return "unsupported"
    return "bearerToken" if transport.bearer_token_env_var else "unsupported"


def _dump(model: BaseModel) -> JsonObj:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def _server_info(snapshot: ServerSnapshot) -> JsonObj | None:
    connection = snapshot.connection
    if snapshot.state != "ready" or connection is None or connection.server_info is None:
        return None
    info = connection.server_info
    return {"name": info.name, "title": info.title, "version": info.version,
            "description": getattr(info, "description", None),
            "icons": [_dump(icon) for icon in info.icons] if info.icons else None, "websiteUrl": info.websiteUrl}


def server_status(snapshot: ServerSnapshot, resources: list[Resource] | None = None, *,
                  detail: str | None = None, thread_runtime: bool = True) -> JsonObj:
    """One `McpServerStatus`. `resources` as listed (only with detail "full"). `thread_runtime` is False
    when the listing did not name a thread: Codex then starts the servers only to list them and reports
    `runtimeStatus: null`."""
    connection = snapshot.connection
    ready = snapshot.state == "ready"
    full = detail != "toolsAndAuthOnly"
    return {
        "name": snapshot.name,
        "runtimeStatus": _RUNTIME.get(snapshot.state) if thread_runtime else None,
        "pluginId": None,
        "httpOrigin": _http_origin(snapshot),
        "serverInfo": _server_info(snapshot),
        "serverCapabilities": (_dump(connection.capabilities) if ready and connection and connection.capabilities
                               else None),
        "toolListMeta": None,
        "tools": {tool.name: _dump(tool) for tool in snapshot.tools},
        "toolsError": snapshot.error if snapshot.state == "failed" else None,
        "resources": [_dump(r) for r in resources or []] if full else [],
        "resourceTemplates": [],
        "authStatus": auth_status(snapshot),
    }


def page(items: list[JsonObj], cursor: str | None, limit: int | None) -> JsonObj:
    """`{data, nextCursor}`: the cursor is the index of the next item, as a string. Raises ValueError."""
    start = 0
    if cursor is not None:
        if not cursor.isdigit() or int(cursor) > len(items):
            raise ValueError(f"invalid cursor: {cursor}")
        start = int(cursor)
    end = len(items) if not limit else min(len(items), start + limit)
    return {"data": items[start:end], "nextCursor": str(end) if end < len(items) else None}


def tool_call_response(result: CallToolResult) -> JsonObj:
    """McpServerToolCallResponse: the MCP result as the server gave it; absent fields stay absent."""
    out: JsonObj = {"content": [b.model_dump(mode="json", by_alias=True, exclude_none=True) for b in result.content]}
    if result.structuredContent is not None:
        out["structuredContent"] = result.structuredContent
    out["isError"] = result.isError
    if result.meta is not None:
        out["_meta"] = result.meta
    return out


def resource_read_response(result: ReadResourceResult) -> JsonObj:
    """The ``mcpServer/resource/read`` response for a read result."""
    return {"contents": [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in result.contents],
            "originCallId": None}


def startup_status_params(name: str, state: str, error: str | None, thread_id: str | None) -> JsonObj:
    """Params of `mcpServer/startupStatus/updated` (McpServerStartupState: starting/ready/failed/cancelled)."""
    return notices.mcp_startup_status(thread_id, name, state, error).params
