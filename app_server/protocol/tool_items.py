"""The thread items of tool calls that run outside the exec environment: ``mcpToolCall`` (a call of an MCP
server's tool) and ``webSearch`` (the Responses API's hosted search), with Codex 0.169.0's fields.

Field order is the order Codex emits (and ``app_server/mcp/tools.py`` / ``app_server/threads/web_search.py``
build). Values Codex keeps open (a tool's arguments, an MCP result's content blocks, a search's results)
stay open JSON here too, so a newer server's content passes through unchanged.
"""

# Annotations are evaluated as the classes are made (no `from __future__ import annotations`): pydantic
# would otherwise compile each string annotation again, ~15% of this module's import on the thread/start path.
from typing import Annotated, Literal, TypeAlias

from pydantic import Field

from pycodex.json_types import JsonValue

from .base import OMIT_IF_NONE, OmittingWireModel, WireModel
from .common import ItemId

__all__ = [
    "FindInPageWebSearchAction",
    "McpAppUi",
    "McpToolCallAppContext",
    "McpToolCallError",
    "McpToolCallItem",
    "McpToolCallResult",
    "OpenPageWebSearchAction",
    "OtherWebSearchAction",
    "SearchWebSearchAction",
    "WebSearchAction",
    "WebSearchItem",
]

McpToolCallStatus: TypeAlias = Literal["inProgress", "completed", "failed"]


class McpToolCallAppContext(WireModel):
    """The hosted app (connector) a tool call went through."""

    connector_id: str
    app_name: str | None = None
    action_name: str | None = None
    link_id: str | None = None
    resource_uri: str | None = None


class McpAppUi(WireModel):
    """The UI resource a tool's descriptor names, and how it prefers to be shown."""

    resource_uri: str
    preferred_model_display_mode: Literal["inline", "fullscreen"]


class McpToolCallResult(WireModel):
    """What the MCP server answered: its content blocks, structured content and ``_meta``, as sent."""

    content: list[JsonValue]
    structured_content: JsonValue = None
    meta: JsonValue = Field(default=None, alias="_meta")


class McpToolCallError(WireModel):
    """Why a tool call failed before the server answered."""

    message: str


class McpToolCallItem(OmittingWireModel):
    """A call of an MCP server's tool; ``id`` is the model's call id. ``mcp_app_resource_uri`` is Codex's
    legacy copy of ``mcp_app_ui.resource_uri``, left out when unset (as Codex does)."""

    type: Literal["mcpToolCall"] = "mcpToolCall"
    id: ItemId
    server: str
    tool: str
    status: McpToolCallStatus
    arguments: JsonValue
    app_context: McpToolCallAppContext | None = None
    mcp_app_resource_uri: Annotated[str | None, OMIT_IF_NONE] = None
    mcp_app_ui: McpAppUi | None = None
    plugin_id: str | None = None
    read_only_hint: bool | None = None
    result: McpToolCallResult | None = None
    error: McpToolCallError | None = None
    duration_ms: int | None = None
    started_at_ms: int | None = None
    completed_at_ms: int | None = None


class SearchWebSearchAction(WireModel):
    """The search ran ``query`` (or several ``queries``)."""

    type: Literal["search"] = "search"
    query: str | None = None
    queries: list[str] | None = None


class OpenPageWebSearchAction(WireModel):
    """The search opened a page."""

    type: Literal["openPage"] = "openPage"
    url: str | None = None


class FindInPageWebSearchAction(WireModel):
    """The search looked for ``pattern`` in a page."""

    type: Literal["findInPage"] = "findInPage"
    url: str | None = None
    pattern: str | None = None


class OtherWebSearchAction(WireModel):
    """A search whose action is not known (yet): Codex's announced search before it completes."""

    type: Literal["other"] = "other"


WebSearchAction: TypeAlias = Annotated[
    SearchWebSearchAction | OpenPageWebSearchAction | FindInPageWebSearchAction | OtherWebSearchAction,
    Field(discriminator="type"),
]


class WebSearchItem(WireModel):
    """A hosted web search; ``query`` is the short text Codex shows for its action."""

    type: Literal["webSearch"] = "webSearch"
    id: ItemId
    query: str
    action: WebSearchAction | None = None
    results: list[JsonValue] | None = None
    started_at_ms: int | None = None
    completed_at_ms: int | None = None
