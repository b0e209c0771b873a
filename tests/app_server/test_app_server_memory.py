"""The app-server over the in-memory edge: the same Endpoint and connection as stdio, no process."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from app_server.app import AppServer
from app_server.connection import AppConnection, ConnectionClosedError
from pycodex.jsonrpc import RequestReceived, RpcError
from pycodex.transport import Endpoint, MessageHandler, Outbox, memory_pair, serve_transport

WAIT = 10.0


class Client:
    def __init__(self, app: AppServer) -> None:
        self.end, server_end = memory_pair()
        self.endpoint = Endpoint(self.end.send)
        self.server_requests: asyncio.Queue[RequestReceived] = asyncio.Queue()
        self.connections: list[AppConnection] = []
        self._tasks = [
            asyncio.ensure_future(serve_transport(self._connect(app), server_end)),
            asyncio.ensure_future(self._read()),
        ]

    def _connect(self, app: AppServer) -> Any:
        def make(outbox: Outbox) -> MessageHandler:
            self.connections.append(app.connection(outbox))
            return self.connections[-1]

        return make

    async def _read(self) -> None:
        try:
            while (raw := await self.end.recv()) is not None:
                msg = self.endpoint.receive(raw)
                if isinstance(msg, RequestReceived):
                    await self.server_requests.put(msg)
        finally:
            self.endpoint.close("server closed")

    async def call(self, method: str, params: Any) -> Any:
        return await self.endpoint.request(method, params, timeout=WAIT)

    async def aclose(self) -> None:
        await self.end.close()
        await asyncio.wait_for(asyncio.gather(*self._tasks), WAIT)


@pytest.fixture
async def client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Client]:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    app = AppServer(codex_home=tmp_path)
    client = Client(app)
    try:
        yield client
    finally:
        await client.aclose()
        await app.shutdown()


async def test_the_initialize_gate_holds_over_the_memory_edge(client: Client) -> None:
    with pytest.raises(RpcError, match=r"^Not initialized$"):
        await client.call("thread/list", {})
    result = await client.call("initialize", {"clientInfo": {"name": "mem", "version": "0"}})
    assert "userAgent" in result
    with pytest.raises(RpcError, match=r"^Already initialized$"):
        await client.call("initialize", {"clientInfo": {"name": "mem", "version": "0"}})
    assert (await client.call("thread/list", {}))["data"] == []


async def test_a_server_request_is_answered_through_the_same_endpoint(client: Client) -> None:
    await client.call("initialize", {"clientInfo": {"name": "mem", "version": "0"}})
    session = client.connections[0].session
    asked = asyncio.ensure_future(session.request("item/tool/requestUserInput", {"q": 1}, timeout=WAIT))
    request = await asyncio.wait_for(client.server_requests.get(), WAIT)
    assert (request.method, request.params) == ("item/tool/requestUserInput", {"q": 1})
    await client.endpoint.send(client.endpoint.peer.respond(request.id, {"answers": {}}))
    assert await asyncio.wait_for(asked, WAIT) == {"answers": {}}

    pending = asyncio.ensure_future(session.request("item/tool/requestUserInput", {}, timeout=WAIT))
    await asyncio.wait_for(client.server_requests.get(), WAIT)
    await client.end.close()  # the client goes away without answering
    with pytest.raises(ConnectionClosedError):
        await asyncio.wait_for(pending, WAIT)
