"""The app-server side of MCP: per-thread managers, thread-less requests, reload, notifications."""

from __future__ import annotations

import json

import pytest

from app_server.config.mcp_servers import McpServerConfig, check_mcp_servers
from app_server.mcp.params import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    ListMcpServerStatusParams,
    McpRequestError,
    McpResourceReadParams,
    McpServerOauthLoginParams,
    McpServerToolCallParams,
)
from app_server.mcp.service import McpService
from app_server.mcp.wire import (
    STATUS_METHOD,
)
from tests.support.mcp_servers import pids_with, stdio_calc
from tests.support.paths import DATA

RECORDED = json.loads((DATA / "mcp" / "codex_0169_app_server.json").read_text())

pytestmark = pytest.mark.timeout(90)


def _call(thread: str, server: str = "calc") -> McpServerToolCallParams:
    return McpServerToolCallParams(threadId=thread, server=server, tool="add", arguments={"a": 2, "b": 2})


async def test_thread_servers_calls_reload_and_notifications() -> None:
    calc, calc_marker = stdio_calc()
    config: dict[str, McpServerConfig] = {"calc": calc}
    sent: list[tuple[str, dict[str, object]]] = []
    service = McpService(lambda: dict(config), lambda method, params: sent.append((method, params)))
    try:
        manager = service.start_thread("t1")
        assert manager is not None
        await manager.wait_ready()
        assert (STATUS_METHOD, {"threadId": "t1", "name": "calc", "status": "ready", "error": None,
                                "failureReason": None}) in sent
        assert await service.tool_call(_call("t1")) == {
            "content": [{"type": "text", "text": "4"}], "structuredContent": {"result": 4}, "isError": False}
        with pytest.raises(McpRequestError) as caught:
            await service.tool_call(_call("t1", "calc2"))
        assert (caught.value.code, caught.value.message) == (INTERNAL_ERROR, "unknown MCP server 'calc2'")
        with pytest.raises(McpRequestError) as caught:
            await service.tool_call(_call("t9"))
        assert caught.value.code == INVALID_PARAMS

        calc2, calc2_marker = stdio_calc("calc2")
        config["calc2"] = calc2
        assert await service.reload() == {}
        await manager.wait_ready()
        assert (await service.tool_call(_call("t1", "calc2")))["structuredContent"] == {"result": 4}

        listed = await service.list_status(ListMcpServerStatusParams(threadId="t1"))
        assert [(e["name"], e["runtimeStatus"]) for e in listed["data"]] == [("calc", "connected"),
                                                                            ("calc2", "connected")]
        assert listed["data"][0]["resources"][0]["uri"] == "calc://greeting"
        await service.end_thread("t1")
        assert pids_with(calc_marker) == [] and pids_with(calc2_marker) == []
    finally:
        await service.shutdown()


async def test_a_thread_opened_without_servers_gets_them_on_reload() -> None:
    config: dict[str, McpServerConfig] = {}
    service = McpService(lambda: dict(config), lambda method, params: None)
    try:
        thread = service.open_thread("t1", lambda: "never")
        assert thread.manager is None  # nothing configured: no manager, so the MCP SDK is not loaded
        listed = await service.list_status(ListMcpServerStatusParams(threadId="t1"))
        assert listed["data"] == []
        calc, calc_marker = stdio_calc()
        config["calc"] = calc
        assert await service.reload() == {}
        assert thread.manager is not None
        await thread.manager.wait_ready()
        assert (await service.tool_call(_call("t1")))["structuredContent"] == {"result": 4}
        await thread.close()
        assert thread.manager is None and pids_with(calc_marker) == []
        with pytest.raises(McpRequestError):
            await service.tool_call(_call("t1"))  # a closed thread is unknown again
    finally:
        await service.shutdown()


async def test_thread_less_requests_use_temporary_servers() -> None:
    calc, marker = stdio_calc()
    service = McpService(lambda: {"calc": calc}, lambda method, params: None)
    try:
        listed = await service.list_status(ListMcpServerStatusParams(detail="toolsAndAuthOnly", limit=1))
        [entry] = listed["data"]
        assert entry["runtimeStatus"] is None and entry["resources"] == []
        assert sorted(entry["tools"]) == ["add", "describe", "echo", "fail", "slow"]
        read = await service.resource_read(McpResourceReadParams(server="calc", uri="calc://greeting"))
        assert read["contents"][0]["text"] == "hello from calc"
        assert pids_with(marker) == []
        with pytest.raises(McpRequestError) as caught:
            await service.list_status(ListMcpServerStatusParams(cursor="bogus"))
        assert caught.value.code == INVALID_PARAMS
    finally:
        await service.shutdown()


async def test_oauth_login_refusals_match_codex() -> None:
    recorded = [e for e in RECORDED if "request" in e and e["request"]["method"] == "mcpServer/oauth/login"]
    calc, _ = stdio_calc()
    web = check_mcp_servers({"web": {"url": "http://127.0.0.1:1/mcp"}}).servers["web"]
    service = McpService(lambda: {"calc": calc, "web": web}, lambda method, params: None)
    for entry in recorded:
        with pytest.raises(McpRequestError) as caught:
            await service.oauth_login(McpServerOauthLoginParams.model_validate(entry["request"]["params"]))
        assert {"code": caught.value.code, "message": caught.value.message} == entry["response"]["error"]
    with pytest.raises(McpRequestError, match="not supported by pycodex yet"):
        await service.oauth_login(McpServerOauthLoginParams(name="web"))
