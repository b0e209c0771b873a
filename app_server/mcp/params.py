"""Params of the mcpServer/* requests (Codex 0.169 schema) and the error they answer with.

Kept apart from `wire.py` so the request handlers can register at start-up without loading the MCP SDK.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from pycodex.json_types import JsonObj

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "ListMcpServerStatusParams",
    "McpRequestError",
    "McpResourceReadParams",
    "McpServerEventStreamStartParams",
    "McpServerEventStreamStopParams",
    "McpServerOauthLoginParams",
    "McpServerToolCallParams",
    "missing_field",
]

INTERNAL_ERROR = -32603
INVALID_PARAMS = -32602
INVALID_REQUEST = -32600


class McpRequestError(Exception):
    """A request that gets a JSON-RPC error: `code` and the message Codex uses."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class _Params(BaseModel):
    # Unknown keys are ignored, as Codex does: a newer client adds fields (0.171's ``environmentId``).
    model_config = ConfigDict(populate_by_name=True, extra="ignore")


class ListMcpServerStatusParams(_Params):
    """Params of ``mcpServerStatus/list``: a page of the configured MCP servers and their state."""

    cursor: str | None = None
    detail: Literal["full", "toolsAndAuthOnly"] | None = None
    limit: int | None = Field(default=None, ge=0)
    serverName: str | None = None
    threadId: str | None = None


class McpServerToolCallParams(_Params):
    """Params of ``mcpServer/tool/call``: call one tool of a thread's MCP server."""

    threadId: str
    server: str
    tool: str
    arguments: object = None
    meta: object = Field(default=None, alias="_meta")


class McpResourceReadParams(_Params):
    """Params of ``mcpServer/resource/read``: read one resource of an MCP server."""

    server: str
    uri: str
    threadId: str | None = None
    connectorId: str | None = None
    originCallId: str | None = None
    target: object = None
    meta: JsonObj | None = Field(default=None, alias="_meta")


class McpServerOauthLoginParams(_Params):
    """Params of ``mcpServer/oauth/login``: start the OAuth login of an MCP server."""

    name: str
    threadId: str | None = None
    scopes: list[str] | None = None
    timeoutSecs: int | None = None
    clientRegistration: Literal["auto", "cimd", "dcr"] | None = None


class McpServerEventStreamStartParams(_Params):
    """Fields are optional here so a missing one gets the -32600 Codex answers (see `missing_field`)."""

    threadId: str | None = None
    server: str | None = None
    name: str | None = None
    arguments: object = None
    subscriptionId: str | None = None
    meta: object = Field(default=None, alias="_meta")


class McpServerEventStreamStopParams(_Params):
    """Params of ``mcpServer/event/stream/stop``: end an event subscription."""

    subscriptionId: str | None = None


def missing_field(params: BaseModel, required: tuple[str, ...]) -> str | None:
    """The first of `required` (in Codex's struct order) the client left out, as serde names it."""
    given = params.model_fields_set
    return next((name for name in required if name not in given), None)
