"""Broadcast notifications with two connections on one server, over the in-memory edge.

Codex 0.169 (measured with ``python -m bench.fanout_bench counts``: two websocket clients, two threads with a
turn each on the first) sends ``thread/status/changed`` twice per turn (active, then idle) and none for
``thread/start``, to every initialized connection, subscribed or not; ``thread/started`` also goes to both.
The other connection gets nothing else of the turn. A broadcast is encoded once: every connection's
transport is handed the very same bytes object.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from app_server.app import AppServer
from pycodex.jsonrpc import NotificationReceived
from pycodex.transport import Endpoint, memory_pair, serve_transport
from pycodex.transport.memory import MemoryTransport
from tests.support.appserver_process import app_server_env
from tests.support.fake_model import FakeModel, message, model_config

WAIT = 20.0


class RecordingTransport:
    """The server's end of a memory pair, keeping every bytes object the server hands it."""

    def __init__(self, inner: MemoryTransport) -> None:
        self.inner = inner
        self.sent: list[bytes] = []

    async def send(self, data: bytes) -> None:
        self.sent.append(data)
        await self.inner.send(data)

    async def recv(self) -> bytes | None:
        return await self.inner.recv()

    async def close(self) -> None:
        await self.inner.close()


class Client:
    """One connection to ``app``: requests, and the notifications it got (method, params)."""

    def __init__(self, app: AppServer) -> None:
        self.end, server_end = memory_pair()
        self.server_side = RecordingTransport(server_end)
        self.endpoint = Endpoint(self.end.send)
        self.notes: list[tuple[str, Any]] = []
        self._completed: asyncio.Queue[str] = asyncio.Queue()
        self._tasks = [asyncio.ensure_future(serve_transport(app.connection, self.server_side)),
                       asyncio.ensure_future(self._read())]

    async def _read(self) -> None:
        try:
            while (raw := await self.end.recv()) is not None:
                msg = self.endpoint.receive(raw)
                if isinstance(msg, NotificationReceived):
                    self.notes.append((msg.method, msg.params))
                    if msg.method == "turn/completed":
                        await self._completed.put(msg.params["threadId"])
        finally:
            self.endpoint.close("server closed")

    async def call(self, method: str, params: Any) -> Any:
        return await self.endpoint.request(method, params, timeout=WAIT)

    async def turn(self, thread: str) -> None:
        await self.call("turn/start", {"threadId": thread, "input": [{"type": "text", "text": "go"}]})
        assert await asyncio.wait_for(self._completed.get(), WAIT) == thread

    def count(self, method: str, thread: str | None = None) -> int:
        return sum(1 for m, p in self.notes if m == method and (thread is None or p.get("threadId") == thread))

    async def aclose(self) -> None:
        await self.end.close()
        await asyncio.wait_for(asyncio.gather(*self._tasks), WAIT)


@pytest.fixture
async def pair(tmp_path: Path) -> AsyncIterator[tuple[Client, Client]]:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    model = await FakeModel.start({"responses": [{"output": [message("done")]}], "when_exhausted": "repeat_last"},
                                  tmp_path)
    model_config(home, model.url)
    app = AppServer(codex_home=home, environ=app_server_env(home), cwd=work)
    clients = (Client(app), Client(app))
    try:
        for client in clients:
            await client.call("initialize", {"clientInfo": {"name": "fanout", "version": "0"}})
            await client.endpoint.send(json.dumps({"method": "initialized"}).encode())
        yield clients
    finally:
        for client in clients:
            await client.aclose()
        await app.shutdown()
        await model.stop()


async def _settled(watcher: Client, threads: list[str]) -> None:
    """Wait (bounded) until the watcher has each thread's idle status: broadcasts to it may trail the
    runner's turn/completed."""
    async def idle_for_all() -> None:
        while not all(any(m == "thread/status/changed" and p == {"threadId": t, "status": {"type": "idle"}}
                          for m, p in watcher.notes) for t in threads):
            await asyncio.sleep(0.01)

    await asyncio.wait_for(idle_for_all(), WAIT)


async def test_status_changes_reach_every_connection_twice_per_turn_as_codex(pair: tuple[Client, Client]) -> None:
    runner, watcher = pair
    threads = [(await runner.call("thread/start", {"cwd": str(Path.cwd())}))["thread"]["id"] for _ in range(2)]
    for thread in threads:
        await runner.turn(thread)
    await _settled(watcher, threads)
    for thread in threads:
        assert runner.count("thread/status/changed", thread) == 2
        assert watcher.count("thread/status/changed", thread) == 2
    assert watcher.count("thread/started") == 2
    # Not subscribed: nothing of the turns themselves.
    assert {m for m, _ in watcher.notes} == {"thread/started", "thread/status/changed"}


async def test_a_broadcast_hands_every_connection_the_same_bytes(pair: tuple[Client, Client]) -> None:
    runner, watcher = pair
    thread = (await runner.call("thread/start", {"cwd": str(Path.cwd())}))["thread"]["id"]
    await runner.turn(thread)
    await _settled(watcher, [thread])

    def status_frames(client: Client) -> list[bytes]:
        return [data for data in client.server_side.sent if b'"thread/status/changed"' in data]

    theirs, ours = status_frames(watcher), status_frames(runner)
    assert len(theirs) == len(ours) == 2
    for mine, other in zip(ours, theirs, strict=True):
        assert mine is other  # one encoding, not an equal copy


@pytest.mark.codex
async def test_codex_routes_status_changes_the_same_way(codex_bin: Path) -> None:
    """The same two-connection probe against both servers over websockets: the watcher's counts agree."""
    from bench.fanout_bench import counts
    from bench.harness import Impl, implementations

    ours, theirs = (await counts(implementations()[0])), (await counts(Impl("codex", [str(codex_bin)])))
    for side in (ours, theirs):
        assert sorted(side["watcher_status"].values()) == [2, 2]
        assert side["watcher"]["thread/started"] == 2
    for key in ("runner", "watcher"):
        assert ours[key]["thread/status/changed"] == theirs[key]["thread/status/changed"]
