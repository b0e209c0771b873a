"""``pycodex acp`` as a subprocess, driven by the ACP Python SDK's own client side (``acp.connect_to_agent``).

``EditorClient`` is the editor: it records every ``session/update``, answers ``session/request_permission``
with a scripted option, and (when it advertises them) serves ``fs/*`` from its own buffers (a write is
recorded there, never put on disk, so a file on disk proves the agent wrote it itself) and ``terminal/*`` by
running the command as a real subprocess, as an editor's terminal would.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import acp
import pytest
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from tests.support.appserver_process import app_server_env
from tests.support.procs import spawn, stop_process

#: Bound on one ACP request that is not a turn, and on a whole turn against the fake model.
STEP = 60.0


@dataclass
class _Terminal:
    proc: asyncio.subprocess.Process
    output: bytearray = field(default_factory=bytearray)
    reader: asyncio.Task[None] | None = None


class EditorClient:
    """The client side: what the agent sent, and scripted answers."""

    def __init__(self, *, permission: str | None = "allow_once") -> None:
        self.permission = permission
        self.updates: list[tuple[str, Any]] = []
        self.permissions: list[Any] = []
        self.buffers: dict[str, str] = {}
        self.writes: list[tuple[str, str]] = []
        self.reads: list[str] = []
        self.terminals: dict[str, _Terminal] = {}
        self.commands: list[list[str]] = []
        self._changed = asyncio.Event()

    # -- what a test waits for ------------------------------------------------------------------------
    def kinds(self) -> list[str]:
        return [u.session_update for _, u in self.updates]

    def of_kind(self, kind: str) -> list[Any]:
        return [u for _, u in self.updates if u.session_update == kind]

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = STEP) -> None:
        async with asyncio.timeout(timeout):
            while not predicate():
                self._changed.clear()
                await self._changed.wait()

    # -- the Client interface -------------------------------------------------------------------------
    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))
        self._changed.set()

    async def request_permission(self, options: list[Any], session_id: str, tool_call: Any,
                                 **kwargs: Any) -> RequestPermissionResponse:
        self.permissions.append(tool_call)
        self._changed.set()
        if self.permission is None:  # as a client answers once the user cancelled the prompt
            return cancelled_permission()
        assert any(o.option_id == self.permission for o in options), options
        return RequestPermissionResponse(outcome=AllowedOutcome(option_id=self.permission, outcome="selected"))

    async def read_text_file(self, path: str, session_id: str, limit: int | None = None, line: int | None = None,
                             **kwargs: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        try:
            return ReadTextFileResponse(content=Path(path).read_text())
        except FileNotFoundError:
            raise acp.RequestError.resource_not_found(path) from None

    async def write_text_file(self, content: str, path: str, session_id: str, **kwargs: Any) -> WriteTextFileResponse:
        self.writes.append((path, content))
        self.buffers[path] = content
        self._changed.set()
        return WriteTextFileResponse()

    async def create_terminal(self, command: str, session_id: str, args: list[str] | None = None,
                              cwd: str | None = None, env: Any = None, output_byte_limit: int | None = None,
                              **kwargs: Any) -> CreateTerminalResponse:
        argv = [command, *(args or [])]
        self.commands.append(argv)
        proc = await spawn(*argv, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
                           stdin=asyncio.subprocess.DEVNULL)
        terminal = _Terminal(proc)

        async def read() -> None:
            assert proc.stdout is not None
            while chunk := await proc.stdout.read(4096):
                terminal.output += chunk

        terminal.reader = asyncio.get_running_loop().create_task(read())
        terminal_id = f"term-{len(self.terminals)}"
        self.terminals[terminal_id] = terminal
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> TerminalOutputResponse:
        terminal = self.terminals[terminal_id]
        return TerminalOutputResponse(output=terminal.output.decode(), truncated=False)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str,
                                     **kwargs: Any) -> WaitForTerminalExitResponse:
        terminal = self.terminals[terminal_id]
        code = await terminal.proc.wait()
        if terminal.reader is not None:
            await terminal.reader
        return WaitForTerminalExitResponse(exit_code=code)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        await stop_process(self.terminals[terminal_id].proc)

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        await stop_process(self.terminals[terminal_id].proc)

    async def close(self) -> None:
        for terminal in self.terminals.values():
            await stop_process(terminal.proc)


def cancelled_permission() -> RequestPermissionResponse:
    """What a client answers a pending permission once it cancelled the prompt."""
    return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


@dataclass
class Agent:
    """One running ``pycodex acp`` and the SDK connection to it."""

    conn: Any
    client: EditorClient
    proc: asyncio.subprocess.Process


def capabilities(editor: bool) -> ClientCapabilities:
    """What the client advertises: with ``editor``, fs reads and writes and terminals."""
    return ClientCapabilities(fs=FileSystemCapabilities(read_text_file=editor, write_text_file=editor), terminal=editor)


@contextlib.asynccontextmanager
async def run_agent(codex_home: Path, cwd: Path, client: EditorClient, *, editor: bool = False,
                    args: tuple[str, ...] = (), env: dict[str, str] | None = None) -> AsyncIterator[Agent]:
    """``pycodex acp`` in ``cwd`` on ``codex_home``, initialized; stopped (its process group killed) after."""
    env = app_server_env(codex_home, env)
    with (codex_home.parent / "acp-agent.stderr.log").open("ab") as stderr:  # read by nobody: never a full pipe
        proc = await spawn(sys.executable, "-m", "pycodex", "acp", *args, cwd=cwd, env=env,
                           stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=stderr,
                           limit=1 << 24)
    assert proc.stdin is not None and proc.stdout is not None
    conn = acp.connect_to_agent(client, proc.stdin, proc.stdout)
    try:
        await asyncio.wait_for(conn.initialize(protocol_version=acp.PROTOCOL_VERSION,
                                               client_capabilities=capabilities(editor)), STEP)
        yield Agent(conn, client, proc)
    finally:
        await client.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(conn.close(), 5)
        proc.stdin.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), 10)
        await stop_process(proc)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """CODEX_HOME of the test."""
    return tmp_path / "home"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The session's working directory."""
    path = tmp_path / "work"
    path.mkdir()
    return path
