"""Serving ``initialize`` on stdio stays cheap. The real ``pycodex app-server`` entry point runs under
``python -X importtime``: before its initialize answer is written it has imported neither pydantic nor
asyncio nor the server (app_server/startup.py answers first); by the time it exits after that one request
it has still imported neither the protocol models of other methods nor the libraries only websockets,
HTTP models, JWT auth or MCP need. The product modules of each side are exactly the ones
``app_server/loading.py`` declares (``BEFORE_ANSWER`` and ``AT_STARTUP``). (That every declared method resolves to its family's handler is checked
in tests/app_server/test_method_declarations.py.)"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app_server.loading import AFTER_FIRST_THREAD, AT_STARTUP, BEFORE_ANSWER, prewarm_modules
from tests.support.appserver_process import app_server_env, default_argv

#: The product's top-level packages: what the declared start-up sets are made of.
PRODUCT = frozenset({"app_server", "pycodex", "exec_client", "exec_server", "relay", "agent_api"})

#: What start-up must not pay for: every other method's wire models, and the heavy optional libraries.
NOT_AT_STARTUP = (
    "app_server.protocol.threads", "app_server.protocol.turns", "app_server.protocol.items",
    "app_server.protocol.notifications", "app_server.protocol.approvals", "app_server.protocol.methods",
    "app_server.protocol.server_info", "app_server.protocol.schema_export", "app_server.handlers.threads",
    "app_server.handlers.turns", "app_server.model.client", "exec_client.client", "exec_client.wire.protocol",
)
HEAVY_LIBRARIES = frozenset({"websockets", "httpx", "jwt", "cryptography", "rich", "mcp"})
#: What the initialize answer must not wait for: the argument parser, the event loop, pydantic and the
#: server itself (its config, protocol models and stores are built after the answer is written).
NOT_BEFORE_ANSWER = ("argparse", "asyncio", "pydantic", "pydantic_core", "app_server.app", "app_server.config",
                     "app_server.protocol", "app_server.store", "app_server.handlers", "pycodex.transport.ws_auth")
#: What a first turn needs besides its thread: imported once thread/start has been answered.
AFTER_FIRST_THREAD_GROUP = prewarm_modules(AFTER_FIRST_THREAD)
INITIALIZE = {"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "t", "version": "1"}}}


def _module(line: str) -> str | None:
    """The module an importtime line names ("import time: <self> | <cumulative> | <name>"), if it is one."""
    if line.startswith("import time:") and line.count("|") == 2:
        return line.rsplit("|", 1)[1].strip()
    return None


def _run_importtime(tmp_path: Path, *more: dict[str, object]) -> list[str]:
    """stdout and stderr in one pipe, so the lines keep the order in which they were written."""
    proc = subprocess.run(
        [default_argv()[0], "-X", "importtime", *default_argv()[1:]],
        input="".join(json.dumps(message) + "\n" for message in (INITIALIZE, *more)), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        timeout=60, env=app_server_env(tmp_path / "home", {"PYCODEX_LOG": "error"}),
    )
    return proc.stdout.splitlines()


def _product(names: set[str]) -> set[str]:
    return {name for name in names if name.split(".")[0] in PRODUCT}


def _differs(seen: set[str], declared: frozenset[str]) -> str:
    return f"imported but not declared: {sorted(seen - declared)}; declared but not imported: {sorted(declared - seen)}"


def test_stdio_initialize_is_answered_before_the_server_is_imported(tmp_path: Path) -> None:
    lines = _run_importtime(tmp_path)
    answer_at = next(i for i, line in enumerate(lines) if line.startswith('{"id":1,'))
    assert "userAgent" in json.loads(lines[answer_at])["result"]
    before = {name for line in lines[:answer_at] if (name := _module(line))}
    after = {name for line in lines[answer_at:] if (name := _module(line))}
    assert "app_server.startup" in before and "pydantic" in after  # the probe sees both sides of the answer
    early = sorted(n for n in before if any(n == p or n.startswith(f"{p}.") for p in NOT_BEFORE_ANSWER))
    assert early == []
    assert _product(before) == BEFORE_ANSWER, _differs(_product(before), BEFORE_ANSWER)


def test_stdio_initialize_imports_only_what_it_needs(tmp_path: Path) -> None:
    lines = _run_importtime(tmp_path)
    names = {name for line in lines if (name := _module(line))}
    assert "app_server.protocol.initialize" in names  # the replayed request went through the real handler
    assert sorted(name for name in NOT_AT_STARTUP if name in names) == []
    assert sorted(name for name in names if name.split(".")[0] in HEAVY_LIBRARIES) == []
    at_startup = _product(names) - BEFORE_ANSWER
    assert at_startup == AT_STARTUP, _differs(at_startup, AT_STARTUP)


def test_a_first_thread_without_mcp_servers_does_not_load_the_mcp_sdk(tmp_path: Path) -> None:
    lines = _run_importtime(tmp_path, {"method": "initialized"}, {"id": 2, "method": "thread/start", "params": {}})
    assert any(line.startswith('{"id":2,"result":{"thread"') for line in lines)
    names = {name for line in lines if (name := _module(line))}
    assert "app_server.mcp.params" in names  # the thread's MCP service was built (without the SDK)
    assert sorted(name for name in names if name.split(".")[0] == "mcp") == []


async def _first_turn_lines(tmp_path: Path) -> list[str]:
    """Every line (stdout and stderr) of a real server under ``-X importtime`` that serves a first thread
    and turn (the offline scripted model): the turn's modules load once a thread is handed out."""
    home = tmp_path / "home"
    env = app_server_env(home, {"PYCODEX_LOG": "error"})
    (home / "config.toml").write_text('model_provider = "scripted"\n')
    proc = await asyncio.create_subprocess_exec(
        default_argv()[0], "-X", "importtime", *default_argv()[1:], stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=env, cwd=tmp_path,
    )
    assert proc.stdin is not None and proc.stdout is not None
    lines: list[str] = []

    async def until(done: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        assert proc.stdout is not None
        while True:
            raw = await asyncio.wait_for(proc.stdout.readline(), 60)
            assert raw, "the server exited early: " + "\n".join(lines[-20:])
            line = raw.decode().rstrip("\n")
            lines.append(line)
            if line.startswith("{") and done(message := json.loads(line)):
                return message

    try:
        for message in (INITIALIZE, {"method": "initialized"}, {"id": 2, "method": "thread/start", "params": {}}):
            proc.stdin.write((json.dumps(message) + "\n").encode())
        thread_id = (await until(lambda m: m.get("id") == 2))["result"]["thread"]["id"]
        turn = {"id": 3, "method": "turn/start", "params": {"threadId": thread_id, "input": [{"type": "text", "text": "hi"}]}}
        proc.stdin.write((json.dumps(turn) + "\n").encode())
        await until(lambda m: m.get("method") == "turn/completed")
        proc.stdin.close()
        lines += (await asyncio.wait_for(proc.stdout.read(), 60)).decode().splitlines()
        await asyncio.wait_for(proc.wait(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    return lines


async def test_a_first_turn_imports_httpx_without_its_command_line_tool(tmp_path: Path) -> None:
    """httpx imports its CLI (click, rich, pygments) when they are installed; `pycodex` keeps it out."""
    names = {name for line in await _first_turn_lines(tmp_path) if (name := _module(line))}
    assert "httpx" in names  # the first turn's HTTP client was imported (the second prewarm ran)
    assert sorted(name for name in names if name.split(".")[0] in {"click", "rich", "pygments"}) == []


def test_a_first_thread_waits_for_none_of_the_turn_modules(tmp_path: Path) -> None:
    """thread/start is answered before the turn's own modules (its family, the HTTP client) are imported."""
    lines = _run_importtime(tmp_path, {"method": "initialized"}, {"id": 2, "method": "thread/start", "params": {}})
    answer_at = next(i for i, line in enumerate(lines) if line.startswith('{"id":2,"result":{"thread"'))
    before = {name for line in lines[:answer_at] if (name := _module(line))}
    assert "app_server.mcp.service" in before  # the probe sees the thread's side (its MCP service was built)
    assert sorted(before & set(AFTER_FIRST_THREAD_GROUP)) == []
