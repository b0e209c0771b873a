"""The MCP connection manager against the real calc server, over stdio and streamable HTTP."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator

import pytest

from app_server.config.mcp_servers import check_mcp_servers
from app_server.mcp.client import McpCallError
from app_server.mcp.manager import McpConnectionManager
from tests.support.mcp_servers import http_calc, http_calc_server, pids_with, stdio_calc

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
async def http_url() -> AsyncIterator[str]:
    async with http_calc_server() as url:
        yield url


async def _exercise(manager: McpConnectionManager) -> None:
    manager.start()
    states = await manager.wait_ready()
    assert states["calc"].state == "ready", states["calc"].error
    assert sorted(t.name for t in manager.tool_catalog()["calc"]) == ["add", "describe", "echo", "fail", "slow"]
    result = await manager.call_tool("calc", "add", {"a": 2, "b": 40})
    assert result.structuredContent == {"result": 42} and not result.isError
    echo = await manager.call_tool("calc", "echo", {"text": "hé"})
    assert [c.model_dump()["text"] for c in echo.content] == ["hé"]
    described = await manager.call_tool("calc", "describe", {"name": "n", "where": {"city": "Oslo"}})
    assert described.structuredContent == {"result": "n:short:None:1:city='Oslo' zip_code=None"}
    failed = await manager.call_tool("calc", "fail", {})
    assert failed.isError
    resources = await manager.list_resources("calc")
    assert [str(r.uri) for r in resources] == ["calc://greeting"]
    read = await manager.read_resource("calc", "calc://greeting")
    assert read.contents[0].model_dump()["text"] == "hello from calc"
    with pytest.raises(McpCallError) as timed_out:
        await manager.call_tool("calc", "slow", {}, timeout_s=0.5)
    assert str(timed_out.value) == ("tool call error: tool call failed for `calc/slow`\n\nCaused by:\n"
                                    "    timed out awaiting tools/call after 500ms")
    # the server still answers after a timed-out call
    assert (await manager.call_tool("calc", "add", {"a": 1, "b": 1})).structuredContent == {"result": 2}


async def test_stdio_server_lifecycle_leaves_no_process() -> None:
    config, marker = stdio_calc()
    events: list[tuple[str, str, str | None]] = []
    manager = McpConnectionManager({"calc": config}, on_status=lambda *e: events.append(e))
    try:
        await _exercise(manager)
        assert pids_with(marker), "the stdio server should be running"
    finally:
        await manager.shutdown()
    assert pids_with(marker) == []
    assert events[:2] == [("calc", "starting", None), ("calc", "ready", None)]


async def test_http_server(http_url: str) -> None:
    manager = McpConnectionManager({"calc": http_calc(http_url)})
    try:
        await _exercise(manager)
    finally:
        await manager.shutdown()


async def test_http_bearer_token_from_env(http_url: str) -> None:
    config = http_calc(http_url, bearer_token_env_var="CALC_TOKEN")
    manager = McpConnectionManager({"calc": config}, env={})
    try:
        manager.start()
        state = (await manager.wait_ready())["calc"]
        assert state.state == "failed"
        assert "Environment variable CALC_TOKEN for MCP server 'calc' is not set" in (state.error or "")
    finally:
        await manager.shutdown()


async def test_tool_filters_hide_and_refuse() -> None:
    config, _ = stdio_calc(enabled_tools=["add", "echo"], disabled_tools=["echo"])
    manager = McpConnectionManager({"calc": config})
    try:
        manager.start()
        await manager.wait_ready()
        assert [t.name for t in manager.tool_catalog()["calc"]] == ["add"]
        with pytest.raises(McpCallError, match="tool 'echo' is disabled for MCP server 'calc'"):
            await manager.call_tool("calc", "echo", {"text": "x"})
    finally:
        await manager.shutdown()


async def test_failures_are_per_server_and_reported() -> None:
    good, _ = stdio_calc()
    table = {
        "missing": {"command": "/nonexistent/mcp-server"},
        "mute": {"command": sys.executable, "args": ["-c", "import time; time.sleep(60)"], "startup_timeout_sec": 0.5},
        "off": {"command": "/nonexistent/never-started", "enabled": False},
    }
    configs = {**check_mcp_servers(table).servers, "calc": good}
    manager = McpConnectionManager(configs)
    try:
        manager.start()
        states = await manager.wait_ready()
        assert states["calc"].state == "ready"
        assert states["missing"].state == "failed"
        assert states["missing"].error == ("MCP client for `missing` failed to start: MCP startup failed: "
                                           "No such file or directory (os error 2)")
        assert states["mute"].state == "failed"
        assert states["mute"].error == ("MCP client for `mute` timed out after 0.5 seconds. Add or adjust "
                                        "`startup_timeout_sec` in your config.toml:\n[mcp_servers.mute]\n"
                                        "startup_timeout_sec = XX")
        assert "off" not in states
        snapshot = {s.name: s.state for s in manager.snapshot()}
        assert snapshot == {"calc": "ready", "missing": "failed", "mute": "failed", "off": "disabled"}
        assert [spec["name"] for spec in manager.tool_specs()] == ["mcp__calc"]
        with pytest.raises(McpCallError, match="is not ready"):
            await manager.call_tool("missing", "add", {})
        with pytest.raises(McpCallError, match="MCP server 'off' is disabled"):
            await manager.call_tool("off", "add", {})
    finally:
        await manager.shutdown()


async def test_reload_adds_removes_restarts() -> None:
    calc, calc_marker = stdio_calc()
    manager = McpConnectionManager({"calc": calc})
    try:
        manager.start()
        await manager.wait_ready()
        with pytest.raises(McpCallError, match="unknown MCP server 'calc2'"):
            await manager.call_tool("calc2", "add", {"a": 1, "b": 2})
        calc2, calc2_marker = stdio_calc("calc2")
        plan = await manager.reload({"calc": calc, "calc2": calc2})
        assert (plan.added, plan.removed, plan.changed) == (("calc2",), (), ())
        assert (await manager.call_tool("calc2", "add", {"a": 1, "b": 2})).structuredContent == {"result": 3}
        before = pids_with(calc_marker)
        changed = calc.model_copy(update={"tool_timeout_s": 5.0})
        plan = await manager.reload({"calc": changed})
        assert (plan.added, plan.removed, plan.changed) == ((), ("calc2",), ("calc",))
        assert pids_with(calc2_marker) == []
        await manager.wait_ready()
        after = pids_with(calc_marker)
        assert after and set(after).isdisjoint(before), "a changed server is restarted"
        assert manager.configs["calc"].tool_timeout == 5.0
        with pytest.raises(McpCallError, match="unknown MCP server 'calc2'"):
            await manager.call_tool("calc2", "add", {})
    finally:
        await manager.shutdown()
    assert pids_with(calc_marker) == []


async def test_shutdown_while_starting_leaves_no_process() -> None:
    config, marker = stdio_calc()
    events: list[tuple[str, str, str | None]] = []
    manager = McpConnectionManager({"calc": config}, on_status=lambda *e: events.append(e))
    manager.start()
    await asyncio.sleep(0)  # let the connection task begin
    await manager.shutdown()
    assert pids_with(marker) == []
    assert events == [("calc", "starting", None), ("calc", "cancelled", None)]


async def test_a_server_that_dies_fails_calls_and_turns_failed() -> None:
    config, marker = stdio_calc()
    manager = McpConnectionManager({"calc": config})
    try:
        manager.start()
        await manager.wait_ready()
        for pid in pids_with(marker):
            os.kill(pid, signal.SIGKILL)
        with pytest.raises(McpCallError, match="calc"):
            # the SDK sees the server's stdout close: the call fails as "connection closed" (or finds the
            # write stream already closed), and the server is marked failed
            await manager.call_tool("calc", "add", {"a": 1, "b": 1}, timeout_s=5)
        with pytest.raises(McpCallError, match="MCP server 'calc' is not ready \\(failed\\)"):
            await manager.call_tool("calc", "add", {"a": 1, "b": 1}, timeout_s=5)
        assert [s.state for s in manager.snapshot()] == ["failed"]
    finally:
        await manager.shutdown()


async def test_turn_waits_for_required_servers_and_a_grace_for_the_others() -> None:
    calc, _ = stdio_calc(required=True)
    mute = {"command": sys.executable, "args": ["-c", "import time; time.sleep(60)"], "startup_timeout_sec": 30}
    manager = McpConnectionManager({"calc": calc, **check_mcp_servers({"mute": mute}).servers})
    try:
        manager.start()
        await manager.wait_for_turn(0.2)
        states = {s.name: s.state for s in manager.snapshot()}
        assert states == {"calc": "ready", "mute": "starting"}
        assert [spec["name"] for spec in manager.tool_specs()] == ["mcp__calc"]
    finally:
        await manager.shutdown()
