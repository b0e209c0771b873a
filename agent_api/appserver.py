"""A minimal client for ``<bin> app-server`` over stdio, for session selection and fork.

Messages are read in order through one bounded hop: the flow that waits for a response also sees the
notifications that arrive before it, so a slow consumer slows the server down instead of growing a
buffer. Server-initiated requests (approvals) are declined at once and handed to the flow.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path

from agent_api.channel import BoundedChannel
from agent_api.process import kill_group, pump_lines, spawn, stderr_tail
from pycodex.json_types import JsonObj, JsonValue
from pycodex.jsonrpc.codec import (
    ErrorReceived,
    Message,
    NotificationReceived,
    RequestReceived,
    ResponseReceived,
)
from pycodex.jsonrpc.framing import OverlongLine
from pycodex.jsonrpc.peer import RpcPeer

__all__ = ["SOURCE_KINDS", "AppServerClient", "RpcFailure"]

#: Threads started by `exec` are hidden from thread/list unless asked for (agent_wrapper.md §8.2).
SOURCE_KINDS = ["cli", "vscode", "exec", "appServer"]
CLOSE_GRACE = 5.0
#: Bound on the handshake and on a session pre-check (generous: the machine may be loaded).
STARTUP_TIMEOUT = 30.0


class RpcFailure(Exception):
    """The server answered a request with a JSON-RPC error (or went away before answering)."""

    def __init__(self, error: JsonValue) -> None:
        super().__init__("rpc error")
        self.error = error

    @property
    def message(self) -> str:
        """The error's ``message`` text, or ``""`` when the error object has none."""
        if isinstance(self.error, Mapping) and isinstance(self.error.get("message"), str):
            return str(self.error["message"])
        return ""


class AppServerClient:
    """One app-server child and its ordered message stream."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None and proc.stderr is not None
        self.proc = proc
        self._peer = RpcPeer()
        self._lines: BoundedChannel[bytes | OverlongLine] = BoundedChannel()
        loop = asyncio.get_running_loop()
        self._reader = loop.create_task(pump_lines(proc.stdout, self._lines))
        self._stderr = loop.create_task(stderr_tail(proc.stderr))

    @classmethod
    async def start(cls, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str]) -> AppServerClient:
        """Spawn ``argv`` with ``app-server`` appended, in ``cwd`` with ``env`` added to the environment."""
        return cls(await spawn([*argv, "app-server"], cwd=cwd, env_overrides=env))

    async def _write(self, data: bytes) -> None:
        stdin = self.proc.stdin
        if stdin is None or stdin.is_closing():
            raise RpcFailure(None)
        try:
            stdin.write(data + b"\n")
            await stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise RpcFailure(None) from exc

    async def request(self, method: str, params: object) -> int:
        """Send a request and return its id (the answer comes through ``next_message``)."""
        request_id, data = self._peer.request(method, params)
        await self._write(data)
        return request_id

    async def notify(self, method: str, params: object = None) -> None:
        """Send a notification."""
        await self._write(self._peer.notify(method, params))

    async def next_message(self) -> Message | None:
        """The next message from the server (None once its stdout has ended)."""
        while (line := await self._lines.recv()) is not None:
            if isinstance(line, OverlongLine) or not line.strip():
                continue
            msg = self._peer.receive(line)
            if isinstance(msg, RequestReceived):
                # Nobody is there to approve anything: decline, and let the flow decide what it means.
                with contextlib.suppress(RpcFailure):
                    await self._write(self._peer.respond_error(
                        msg.id, {"code": -32601, "message": "not supported by this client"}
                    ))
            return msg
        return None

    async def call(self, method: str, params: object) -> JsonValue:
        """Send a request and return its result; notifications that arrive first are skipped."""
        request_id = await self.request(method, params)
        while (msg := await self.next_message()) is not None:
            if isinstance(msg, ResponseReceived) and msg.id == request_id:
                return msg.result
            if isinstance(msg, ErrorReceived) and msg.id == request_id:
                raise RpcFailure(msg.error)
            if isinstance(msg, NotificationReceived | RequestReceived):
                continue
        raise RpcFailure(None)

    async def initialize(self, client_name: str = "agent_api") -> None:
        """The handshake: ``initialize`` (experimental API on) and then ``initialized``."""
        await self.call("initialize", {
            "clientInfo": {"name": client_name, "version": "0.1.0"},
            "capabilities": {"experimentalApi": True},
        })
        await self.notify("initialized")

    async def list_threads(
        self, *, cwd: Path | None, max_pages: int = 20, page_size: int = 100
    ) -> list[JsonObj]:
        """Every thread (bounded: ``max_pages`` pages), exec-created ones included."""
        threads: list[JsonObj] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(max_pages):
            params: JsonObj = {"limit": page_size, "sortKey": "updated_at", "sourceKinds": SOURCE_KINDS,
                                      "cursor": cursor}
            if cwd is not None:
                params["cwd"] = _cwd_filter(cwd)
            result = await self.call("thread/list", params)
            data = result.get("data") if isinstance(result, dict) else None
            threads.extend(item for item in data or [] if isinstance(item, dict))
            cursor = result.get("nextCursor") if isinstance(result, dict) else None
            if not isinstance(cursor, str) or cursor in seen:
                break
            seen.add(cursor)
        return threads

    async def close(self) -> None:
        """EOF on stdin, a bounded wait, then the process group is killed; never raises."""
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()
        self._lines.close_receiver()
        try:
            await asyncio.wait_for(self.proc.wait(), CLOSE_GRACE)
        except TimeoutError:
            kill_group(self.proc)
            await self.proc.wait()
        for task in (self._reader, self._stderr):
            if not task.done():
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


def _cwd_filter(cwd: Path) -> str | list[str]:
    """Sessions record the agent's resolved cwd; match the path as given too when it differs."""
    given = str(cwd)
    try:
        resolved = str(cwd.resolve())
    except OSError:
        return given
    return given if resolved == given else [resolved, given]


def newest_thread(threads: Sequence[Mapping[str, object]]) -> str | None:
    """The id of the thread with the largest ``(updatedAt, createdAt, id)``."""
    best: tuple[float, float, str] | None = None
    for item in threads:
        thread_id = item.get("id")
        if not isinstance(thread_id, str):
            continue
        updated, created = item.get("updatedAt"), item.get("createdAt")
        key = (updated if isinstance(updated, int | float) else 0,
               created if isinstance(created, int | float) else 0, thread_id)
        if best is None or key > best:
            best = key
    return None if best is None else str(best[2])
