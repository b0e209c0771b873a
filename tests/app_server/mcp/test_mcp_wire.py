"""App-server answers built from the manager against what Codex 0.169's app-server answered for the same
calc server (tests/data/mcp/codex_0169_app_server.json, recorded by scripts/capture_mcp_app_server.py)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import ValidationError

from app_server.mcp.approval import (
    ELICITATION_METHOD,
    Answer,
    Decision,
    approval_request_params,
    decide,
    parse_approval_response,
)
from app_server.mcp.manager import McpConnectionManager
from app_server.mcp.params import ListMcpServerStatusParams, McpServerToolCallParams
from app_server.mcp.service import McpService
from app_server.mcp.tools import call_output, error_output, tool_call_item
from app_server.mcp.wire import (
    STATUS_METHOD,
    page,
    resource_read_response,
    server_status,
    startup_status_params,
    tool_call_response,
)
from tests.support.mcp_servers import stdio_calc
from tests.support.paths import DATA

RECORDED: list[dict[str, Any]] = json.loads((DATA / "mcp" / "codex_0169_app_server.json").read_text())

pytestmark = pytest.mark.timeout(60)


def _answers(method: str) -> list[dict[str, Any]]:
    return [e for e in RECORDED if "request" in e and e["request"]["method"] == method]


@pytest.fixture
async def calc() -> AsyncIterator[McpConnectionManager]:
    config, _ = stdio_calc()
    manager = McpConnectionManager({"calc": config})
    manager.start()
    await manager.wait_ready()
    yield manager
    await manager.shutdown()


async def test_status_list_entries_match_codex(calc: McpConnectionManager) -> None:
    listings = _answers("mcpServerStatus/list")
    no_thread = listings[-1]["response"]["result"]["data"][0]
    with_thread = next(e for e in listings if e["request"]["params"].get("threadId"))
    thread_entry = with_thread["response"]["result"]["data"][0]
    [snapshot] = calc.snapshot()
    resources = await calc.list_resources("calc")
    ours = server_status(snapshot, resources, thread_runtime=False)
    assert ours == no_thread
    assert server_status(snapshot, resources) == thread_entry
    assert thread_entry["runtimeStatus"] == "connected"


async def test_tool_call_and_resource_read_match_codex(calc: McpConnectionManager) -> None:
    for entry in _answers("mcpServer/tool/call"):
        if "result" not in entry["response"] or entry["request"]["params"].get("server") != "calc":
            continue
        params = McpServerToolCallParams.model_validate(entry["request"]["params"])
        result = await calc.call_tool(params.server, params.tool, params.arguments)
        assert tool_call_response(result) == entry["response"]["result"], params.tool
    read = _answers("mcpServer/resource/read")[0]
    contents = await calc.read_resource("calc", read["request"]["params"]["uri"])
    assert resource_read_response(contents) == read["response"]["result"]


def test_tool_call_needs_thread_id() -> None:
    entry = _answers("mcpServer/tool/call")[0]
    assert entry["response"]["error"] == {"code": -32600, "message": "Invalid request: missing field `threadId`"}
    with pytest.raises(ValidationError):
        McpServerToolCallParams.model_validate(entry["request"]["params"])


def test_unknown_server_error_text_matches_codex() -> None:
    from app_server.mcp.manager import unknown_server_error

    entry = next(e for e in _answers("mcpServer/tool/call")
                 if e["request"]["params"].get("server") == "calc2" and "error" in e["response"])
    assert entry["response"]["error"]["message"] == str(unknown_server_error("calc2"))


def test_paging_matches_codex_cursor() -> None:
    limited = next(e for e in _answers("mcpServerStatus/list") if e["request"]["params"].get("limit") == 1)
    items = [{"name": "calc"}, {"name": "calc2"}]
    assert page(items, None, 1) == {"data": [{"name": "calc"}], "nextCursor": limited["response"]["result"]["nextCursor"]}
    assert page(items, "1", 1) == {"data": [{"name": "calc2"}], "nextCursor": None}
    with pytest.raises(ValueError):
        page(items, "x", None)
    assert ListMcpServerStatusParams.model_validate({"detail": "full"}).detail == "full"


def test_startup_notifications_are_per_thread() -> None:
    notes = [e["notification"] for e in RECORDED
             if "notification" in e and e["notification"]["method"].startswith("mcpServer/")]
    assert {n["method"] for n in notes} == {STATUS_METHOD}
    assert {n["params"]["threadId"] for n in notes} == {"THREAD_1", "THREAD_2", "THREAD_ASK"}
    assert startup_status_params("calc", "starting", None, "THREAD_1") == notes[0]["params"]


async def test_model_call_items_and_outputs_match_codex(calc: McpConnectionManager) -> None:
    """No tool pre-approved, approval_policy "never": read-only `add` runs, `echo` is refused."""
    items = [e["notification"]["params"]["item"] for e in RECORDED
             if "notification" in e and e["notification"]["method"] == "item/completed"
             and e["notification"]["params"]["threadId"] == "THREAD_1"]
    started = [e["notification"]["params"]["item"] for e in RECORDED
               if "notification" in e and e["notification"]["method"] == "item/started"]
    assert len(started) == 3  # add and echo under "never", echo again under "on-request"
    outputs = next(e["function_call_outputs"] for e in RECORDED if "function_call_outputs" in e)
    routes = calc.routes()
    for recorded in started:
        route = routes.resolve("mcp__calc", recorded["tool"])
        assert route is not None
        assert tool_call_item(recorded["id"], route, recorded["arguments"], calc.find_tool("calc", route.tool),
                              started_at_ms=recorded["startedAtMs"]) == recorded
    config = calc.configs["calc"]
    for recorded, output in zip(items, outputs, strict=True):
        route = routes.resolve("mcp__calc", recorded["tool"])
        assert route is not None
        tool = calc.find_tool(route.server, route.tool)
        outcome = decide("never", config.approval_mode(route.tool), tool.annotations if tool else None)
        start, end = recorded["startedAtMs"], recorded["completedAtMs"]
        if outcome.decision is Decision.REFUSE:
            item = tool_call_item(recorded["id"], route, recorded["arguments"], tool, started_at_ms=start,
                                  error=outcome.message, completed_at_ms=end,
                                  duration_ms=recorded["durationMs"])
            ours: Any = error_output(outcome.message or "", 0.001)
        else:
            assert outcome.decision is Decision.ALLOW
            result = await calc.call_tool(route.server, route.tool, recorded["arguments"])
            item = tool_call_item(recorded["id"], route, recorded["arguments"], tool, started_at_ms=start,
                                  result=result, completed_at_ms=end,
                                  duration_ms=recorded["durationMs"])
            ours = call_output(result, 0.001)
        assert item == recorded
        assert _normal(ours) == _normal(output["output"])


def _normal(output: Any) -> Any:
    wall = re.compile(r"^Wall time: [0-9.]+ seconds")
    if isinstance(output, str):
        return wall.sub("Wall time: T seconds", output)
    return [{**part, "text": wall.sub("Wall time: T seconds", part["text"])} for part in output]


async def test_approval_request_matches_codex(calc: McpConnectionManager) -> None:
    """approvalPolicy "on-request", `echo` has no hints: Codex asks the client before calling it."""
    [asked] = [e for e in RECORDED if "server_request" in e]
    request = asked["server_request"]
    assert request["method"] == ELICITATION_METHOD
    params = request["params"]
    tool = calc.find_tool("calc", "echo")
    assert tool is not None
    config = calc.configs["calc"]
    assert decide("on-request", config.approval_mode("echo"), tool.annotations).decision is Decision.ASK
    ours = approval_request_params(params["threadId"], params["turnId"], "calc", tool, {"text": "asked"},
                                   config.approval_mode("echo"))
    assert ours == params
    assert parse_approval_response(asked["reply"]["result"], "auto") is Answer.ACCEPT


async def test_thread_less_status_lists_match_codex() -> None:
    calc, _ = stdio_calc()
    calc2, _ = stdio_calc("calc2")
    listings = [e for e in _answers("mcpServerStatus/list") if not e["request"]["params"].get("threadId")]
    first, paged = listings[0], listings[-1]
    service = McpService(lambda: {"calc": calc}, lambda method, params: None)
    assert await service.list_status(ListMcpServerStatusParams.model_validate(first["request"]["params"])) \
        == first["response"]["result"]
    service = McpService(lambda: {"calc": calc, "calc2": calc2}, lambda method, params: None)
    assert await service.list_status(ListMcpServerStatusParams.model_validate(paged["request"]["params"])) \
        == paged["response"]["result"]
