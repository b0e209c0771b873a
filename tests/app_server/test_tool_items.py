"""The mcpToolCall and webSearch thread items: the models (app_server/protocol/tool_items.py) hold exactly
what pycodex's builders emit, key order included, so validating a built item and writing it back is the
identity (what thread/read does with a stored one), and what Codex leaves out stays out."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp.types import CallToolResult, TextContent, Tool, ToolAnnotations
from pydantic import TypeAdapter, ValidationError

from app_server.mcp.tools import tool_call_item
from app_server.protocol.base import to_wire
from app_server.protocol.items import KnownThreadItem, ThreadItem
from app_server.protocol.tool_items import McpToolCallItem, WebSearchItem
from app_server.threads.web_search import web_search_item


def _round_trip(raw: dict[str, Any]) -> tuple[object, str]:
    item = TypeAdapter(ThreadItem).validate_python(raw)
    return item, json.dumps(TypeAdapter(ThreadItem).dump_python(item, mode="json", by_alias=True))


class _Route:
    server = "docs"
    tool = "lookup"


def test_a_finished_mcp_tool_call_round_trips_through_its_model() -> None:
    tool = Tool(name="lookup", inputSchema={"type": "object"}, annotations=ToolAnnotations(readOnlyHint=True))
    result = CallToolResult(content=[TextContent(type="text", text="found")], structuredContent={"n": 1})
    raw = tool_call_item("call_1", _Route(), {"q": "x"}, tool, started_at_ms=1, result=result,  # type: ignore[arg-type]
                         completed_at_ms=5, duration_ms=4)
    item, text = _round_trip(raw)
    assert isinstance(item, McpToolCallItem) and item.status == "completed" and item.read_only_hint is True
    assert text == json.dumps(raw)
    assert "mcpAppResourceUri" not in raw  # Codex leaves the legacy field out when unset


def test_a_failed_and_an_open_mcp_tool_call_round_trip() -> None:
    failed = tool_call_item("c", _Route(), None, None, started_at_ms=1, error="server gone",  # type: ignore[arg-type]
                            completed_at_ms=2, duration_ms=1)
    open_call = tool_call_item("d", _Route(), {}, None, started_at_ms=1)  # type: ignore[arg-type]
    for raw in (failed, open_call):
        assert _round_trip(raw)[1] == json.dumps(raw)
    assert to_wire(McpToolCallItem.model_validate(failed))["error"] == {"message": "server gone"}


@pytest.mark.parametrize("call", [
    None,
    {"action": {"type": "search", "query": "pydantic", "queries": ["pydantic", "msgspec"]}},
    {"action": {"type": "open_page", "url": "https://example.com"}},
    {"action": {"type": "find_in_page", "url": "https://example.com", "pattern": "needle"}},
])
def test_web_search_items_round_trip_through_their_model(call: dict[str, Any] | None) -> None:
    raw = web_search_item("ws_1", call, started_at_ms=3)
    item, text = _round_trip(raw)
    assert isinstance(item, WebSearchItem) and text == json.dumps(raw)


def test_the_strict_union_refuses_a_malformed_mcp_tool_call() -> None:
    with pytest.raises(ValidationError):
        TypeAdapter(KnownThreadItem).validate_python({"type": "mcpToolCall", "id": "m", "status": "done"})
