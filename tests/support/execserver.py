"""Shared helpers for the exec-server/exec-client tests: launch a real server (ours or Codex's) and talk
raw JSON-RPC to it over a real loopback websocket. Imported by the exec-server and exec-client tests.
Set ``EXEC_TEST_STDERR=1`` to see the servers' stderr (with ``PYCODEX_LOG=debug`` for ours)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import websockets
from websockets.asyncio.client import ClientConnection

from tests.support.procs import GROUPS
from tests.support.schema import find_codex_bin
from tests.support.tools import require_codex, skip_without_codex

REPO = Path(__file__).resolve().parents[2]
CODEX_BIN = find_codex_bin()  # None when the reference Codex is not installed
STEP = 10.0  # every single wait in these tests is bounded by this many seconds


@dataclass
class ServerProc:
    name: str
    url: str
    proc: subprocess.Popen[bytes]


def server_argv(name: str, *extra: str) -> list[str]:
    if name == "codex":
        assert CODEX_BIN is not None, "codex tests skip when the binary is absent"
        return [str(CODEX_BIN), "exec-server", *extra]
    return [sys.executable, "-m", "exec_server", *extra]


def server_env(tmp: Path) -> dict[str, str]:
    home = tmp / "codex_home"
    home.mkdir(exist_ok=True)
    return {**os.environ, "CODEX_HOME": str(home), "PYTHONPATH": str(REPO)}


@contextmanager
def run_ws_server(
    name: str, tmp: Path, *extra: str, env_extra: dict[str, str] | None = None
) -> Iterator[ServerProc]:
    """Start a websocket exec-server on an ephemeral port; its first stdout line is the URL."""
    if name == "codex":
        require_codex()
    proc = subprocess.Popen(
        server_argv(name, "--listen", "ws://127.0.0.1:0", *extra),
        stdout=subprocess.PIPE,
        stderr=None if os.environ.get("EXEC_TEST_STDERR") else subprocess.DEVNULL,
        env={**server_env(tmp), **(env_extra or {})},
        cwd=tmp,
        start_new_session=True,
    )
    GROUPS.add(proc.pid)
    try:
        assert proc.stdout is not None
        line = readline_with_deadline(proc, STEP)
        assert line.startswith("ws://127.0.0.1:"), line
        yield ServerProc(name, line, proc)
    finally:
        # The server and every child it left behind share its process group; end them by pgid.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(STEP)
        if proc.stdout is not None:
            proc.stdout.close()


def readline_with_deadline(proc: subprocess.Popen[bytes], timeout: float) -> str:
    """The process's next stdout line (stripped), waiting at most ``timeout`` seconds for it to start."""
    import selectors

    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    try:
        if not sel.select(timeout):
            raise AssertionError("server printed no URL in time")
    finally:
        sel.close()
    return proc.stdout.readline().decode().strip()


def server_params() -> list[Any]:
    return [
        pytest.param("pycodex", id="pycodex"),
        pytest.param(
            "codex",
            id="codex",
            marks=[
                pytest.mark.codex,
                skip_without_codex,
            ],
        ),
    ]


@dataclass
class Raw:
    """A raw JSON-RPC websocket conversation; notifications are kept aside while waiting."""

    ws: ClientConnection
    ws_url: str = ""
    notes: list[dict[str, Any]] = field(default_factory=list)
    next_id: int = 1

    async def send(self, msg: dict[str, Any] | str) -> None:
        await self.ws.send(msg if isinstance(msg, str) else json.dumps(msg))

    async def recv(self, timeout: float = STEP) -> dict[str, Any]:
        raw = await asyncio.wait_for(self.ws.recv(), timeout)
        msg: dict[str, Any] = json.loads(raw)
        return msg

    async def call(self, method: str, params: Any = None, *, omit_params: bool = False) -> dict[str, Any]:
        """Send a request and return its whole response object (result or error)."""
        rid = self.next_id
        self.next_id += 1
        msg: dict[str, Any] = {"id": rid, "method": method}
        if not omit_params:
            msg["params"] = params
        await self.send(msg)
        for _ in range(10_000):
            got = await self.recv()
            if got.get("id") == rid:
                return got
            self.notes.append(got)
        raise AssertionError("no response")

    async def ok(self, method: str, params: Any = None) -> Any:
        got = await self.call(method, params)
        assert "result" in got, got
        return got["result"]

    async def initialize(self, resume: str | None = None) -> dict[str, Any]:
        result = await self.ok("initialize", {"clientName": "pytest", "resumeSessionId": resume})
        await self.send({"method": "initialized", "params": {}})
        return dict(result)

    async def events_until_closed(self, process_id: str) -> list[dict[str, Any]]:
        """All notifications for ``process_id`` until both ``process/exited`` and ``process/closed`` came."""
        out = [n for n in self.notes if n.get("params", {}).get("processId") == process_id]
        self.notes = [n for n in self.notes if n not in out]
        for _ in range(100_000):
            methods = {e["method"] for e in out}
            if {"process/exited", "process/closed"} <= methods:
                return out
            got = await self.recv()
            if got.get("params", {}).get("processId") == process_id:
                out.append(got)
            else:
                self.notes.append(got)
        raise AssertionError("process never closed")

    async def resume(self, session: str) -> dict[str, Any]:
        """Resume ``session``, retrying while the server still sees the old connection attached
        (-32010 right after a disconnect is a race, not an answer; Codex's own client retries too)."""
        for _ in range(100):
            got = await self.call("initialize", {"clientName": "pytest", "resumeSessionId": session})
            if "result" in got:
                await self.send({"method": "initialized", "params": {}})
                return dict(got["result"])
            assert got["error"]["code"] == -32010, got
            await self.ws.close()
            await asyncio.sleep(0.1)
            self.ws = await asyncio.wait_for(
                websockets.connect(self.ws_url, compression=None, max_size=None), STEP
            )
        raise AssertionError(f"session {session} stayed attached")

    async def expect_dropped(self) -> None:
        with pytest.raises(websockets.ConnectionClosed):
            await asyncio.wait_for(self.ws.recv(), STEP)


@asynccontextmanager
async def raw_client(url: str, **kwargs: Any) -> AsyncIterator[Raw]:
    ws = await asyncio.wait_for(websockets.connect(url, compression=None, max_size=None, **kwargs), STEP)
    raw = Raw(ws, url)
    try:
        yield raw
    finally:
        await raw.ws.close()


def uri(path: Path | str) -> str:
    return f"file://{path}"


def start_params(process_id: str, argv: list[str], cwd: Path, **extra: Any) -> dict[str, Any]:
    return {
        "processId": process_id,
        "argv": argv,
        "cwd": uri(cwd),
        "env": {"PATH": "/usr/bin:/bin"},
        "tty": False,
        "arg0": None,
        **extra,
    }


def exit_code(events: list[dict[str, Any]]) -> int:
    """The exit code reported among a process's notifications."""
    code: int = next(e for e in events if e["method"] == "process/exited")["params"]["exitCode"]
    return code


def output_of(events: list[dict[str, Any]]) -> bytes:
    """All output bytes among a process's notifications, in sequence order."""
    outs = sorted((e for e in events if e["method"] == "process/output"), key=lambda e: e["params"]["seq"])
    return b"".join(base64.b64decode(e["params"]["chunk"]) for e in outs)
