"""Configs and processes for tests/support/mcp_calc_server.py (a real FastMCP server)."""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from app_server.config.mcp_servers import McpServerConfig, check_mcp_servers
from tests.support.paths import REPO_ROOT
from tests.support.procs import stop_process

CALC_SERVER = REPO_ROOT / "tests" / "support" / "mcp_calc_server.py"


def stdio_calc(name: str = "calc", **extra: Any) -> tuple[McpServerConfig, str]:
    """A stdio calc server config, and the marker argument that finds its process in /proc."""
    marker = f"marker-{uuid.uuid4().hex}"
    table = {name: {"command": sys.executable, "args": [str(CALC_SERVER), "stdio", marker], **extra}}
    return check_mcp_servers(table, strict=True).servers[name], marker


def http_calc(url: str, name: str = "calc", **extra: Any) -> McpServerConfig:
    return check_mcp_servers({name: {"url": url, **extra}}, strict=True).servers[name]


def pids_with(marker: str) -> list[int]:
    """Live processes whose command line holds `marker`."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            state = next((line for line in (proc / "status").read_text().splitlines() if line.startswith("State:")), "")
        except OSError:
            continue
        if marker.encode() in cmdline and "zombie" not in state:
            found.append(int(proc.name))
    return found


@asynccontextmanager
async def http_calc_server() -> AsyncIterator[str]:
    """The calc server over streamable HTTP on 127.0.0.1; yields its MCP endpoint URL."""
    proc = await asyncio.create_subprocess_exec(sys.executable, str(CALC_SERVER), "http",
                                                stdout=asyncio.subprocess.PIPE, start_new_session=True)
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 30)
        yield f"http://127.0.0.1:{int(line)}/mcp"
    finally:
        await stop_process(proc)
