"""Tool specs and call outputs against what Codex 0.169 sent the model for the same calc server
(tests/data/mcp/codex_0169_calc.json, recorded by scripts/capture_mcp_tool_spec.py)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp.types import CallToolResult, ImageContent, TextContent, Tool

from app_server.mcp.approval import NEVER_MESSAGE, Decision, decide
from app_server.mcp.manager import McpConnectionManager
from app_server.mcp.tools import (
    ToolRoutes,
    call_output,
    error_output,
    item_result,
    item_status,
    namespace_for,
    parse_arguments,
    sanitize_name,
)
from app_server.mcp.wire import tool_call_response
from tests.support.mcp_servers import stdio_calc
from tests.support.paths import DATA

RECORDED = json.loads((DATA / "mcp" / "codex_0169_calc.json").read_text())
WALL = re.compile(r"^Wall time: [0-9.]+ seconds")

pytestmark = pytest.mark.timeout(60)


def _normal(output: Any) -> Any:
    """Wall times differ run to run; everything else must match byte for byte."""
    if isinstance(output, str):
        return WALL.sub("Wall time: T seconds", output)
    return [{**item, "text": WALL.sub("Wall time: T seconds", item["text"])} for item in output]


@pytest.fixture
async def calc() -> AsyncIterator[McpConnectionManager]:
    config, _ = stdio_calc(tools={"add": {"approval_mode": "approve"}, "echo": {"approval_mode": "approve"},
                                  "fail": {"approval_mode": "approve"}})
    manager = McpConnectionManager({"calc": config})
    manager.start()
    await manager.wait_ready()
    yield manager
    await manager.shutdown()


async def test_namespace_tool_calls_and_outputs_match_codex(calc: McpConnectionManager) -> None:
    assert calc.tool_specs() == [RECORDED["namespace_tool"]]
    routes = calc.routes()
    recorded = {out["call_id"]: out["output"] for out in RECORDED["outputs"]}
    config = calc.configs["calc"]
    for call in RECORDED["calls"]:
        route = routes.resolve(call["namespace"], call["name"])
        assert route is not None and (route.server, route.tool) == ("calc", call["name"])
        tool = calc.find_tool(route.server, route.tool)
        assert tool is not None
        outcome = decide("never", config.approval_mode(route.tool), tool.annotations)
        if outcome.decision is Decision.REFUSE:
            ours: Any = error_output(outcome.message or "", 0.001)
        else:
            result = await calc.call_tool(route.server, route.tool, parse_arguments(call["arguments"]))
            ours = call_output(result, 0.001)
        assert _normal(ours) == _normal(recorded[call["call_id"]]), call["name"]
    assert recorded["call_slow"][1]["text"] == NEVER_MESSAGE


def test_routes_need_the_namespace() -> None:
    tool = Tool(name="add", inputSchema={"type": "object"})
    routes = ToolRoutes({"calc": [tool]})
    assert routes.resolve("mcp__calc", "add") is not None
    assert routes.resolve(None, "add") is None
    assert routes.resolve("mcp__other", "add") is None


def test_names_are_sanitised_like_codex() -> None:
    # seen on the 0.169 binary: a server named "my-calc.v2" is offered as namespace "mcp__my_calc_v2"
    assert namespace_for("my-calc.v2") == "mcp__my_calc_v2"
    assert sanitize_name("") == "_"
    long = "t" * 80
    assert len(sanitize_name(long)) == 64 and sanitize_name(long).startswith("t" * 24)
    assert sanitize_name(long) != sanitize_name("t" * 81)


def test_arguments() -> None:
    assert parse_arguments("") is None
    assert parse_arguments('{"a": 1}') == {"a": 1}
    with pytest.raises(ValueError):
        parse_arguments("[1]")
    with pytest.raises(ValueError):
        parse_arguments("{")


def test_item_result_and_status() -> None:
    result = CallToolResult(content=[TextContent(type="text", text="5")], structuredContent={"result": 5})
    assert item_result(result) == {"content": [{"type": "text", "text": "5"}], "structuredContent": {"result": 5},
                                   "_meta": None}
    assert item_status(result) == "completed"
    assert item_status(CallToolResult(content=[], isError=True)) == "failed"
    assert item_status(None) == "failed"
    assert tool_call_response(result) == {"content": [{"type": "text", "text": "5"}], "isError": False,
                                          "structuredContent": {"result": 5}}


def test_image_content_becomes_input_image() -> None:
    result = CallToolResult(content=[ImageContent(type="image", data="QUJD", mimeType="image/png")])
    assert call_output(result, 1.5) == [
        {"type": "input_text", "text": "Wall time: 1.5000 seconds\nOutput:"},
        {"type": "input_image", "image_url": "data:image/png;base64,QUJD"},
    ]
