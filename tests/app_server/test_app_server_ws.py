"""Acceptance tests of `pycodex app-server --listen ws://127.0.0.1:PORT` (foundation issue).

Health endpoints, one session per connection, many concurrent connections, and isolation: a client that
vanishes mid-request or stops reading while the server writes a lot never stalls the others.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from urllib.parse import urlparse

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect

from tests.support import SchemaPair, WsAppServerClient

StartWs = Callable[..., Awaitable[WsAppServerClient]]
INIT = {"clientInfo": {"name": "raw_client", "version": "1"}, "capabilities": {"experimentalApi": False}}


def _url(client: WsAppServerClient) -> str:
    assert client.process is not None
    return client.process.argv[-1]


async def _raw_connect(url: str, **kwargs: object) -> ClientConnection:
    return await asyncio.wait_for(connect(url, max_size=None, ping_interval=None, **kwargs), 10.0)  # type: ignore[arg-type]


async def test_readyz_and_healthz_answer_200_and_websocket_still_works(app_server_ws: StartWs) -> None:
    client = await app_server_ws()
    parsed = urlparse(_url(client))
    async with httpx.AsyncClient(base_url=f"http://{parsed.hostname}:{parsed.port}", timeout=5.0) as http:
        for path in ("/readyz", "/healthz", "/readyz?probe=1"):
            response = await http.get(path)
            assert response.status_code == 200, (path, response.status_code, response.text)
    assert await client.call("thread/loaded/list", {}) == {"data": [], "nextCursor": None}


async def test_two_connections_each_have_their_own_session(
    app_server_ws: StartWs, codex_schemas: SchemaPair
) -> None:
    first = await app_server_ws(initialize=False)
    second = await WsAppServerClient.connect(_url(first), codex_schemas, label="ws-second")
    try:
        await first.initialize(name="first_client")
        # Initialization is per connection: the second one still has to do its own handshake.
        refused = await second.request("thread/start", {})
        assert refused["error"] == {"code": -32600, "data": {"appErrorCode": "not_initialized"},
                                    "message": "Not initialized"}
        agent = (await second.initialize(name="second_client"))["userAgent"]
        assert agent.startswith("second_client/0.169.0 (pycodex ")
        again = await first.request("initialize", INIT)
        assert again["error"] == {"code": -32600, "data": {"appErrorCode": "already_initialized"},
                                  "message": "Already initialized"}
        # The same request id on both connections at once: each answer goes to its own connection.
        a, b = await asyncio.gather(
            first.request("thread/loaded/list", {}, id="same"), second.request("thread/list", {}, id="same")
        )
        assert a == {"id": "same", "result": {"data": [], "nextCursor": None}}
        assert set(b["result"]) == {"data", "readStates", "nextCursor", "backwardsCursor"}
    finally:
        await second.close()


async def test_many_concurrent_connections_are_served(
    app_server_ws: StartWs, codex_schemas: SchemaPair
) -> None:
    first = await app_server_ws()
    url = _url(first)
    others = await asyncio.gather(
        *(WsAppServerClient.connect(url, codex_schemas, label=f"ws-{i}") for i in range(8))
    )
    try:
        agents = await asyncio.gather(*(c.initialize(name=f"client_{i}") for i, c in enumerate(others)))
        assert [a["userAgent"].split("/")[0] for a in agents] == [f"client_{i}" for i in range(8)]
        threads = await asyncio.gather(*(c.call("thread/start", {}) for c in others))
        assert len({t["thread"]["id"] for t in threads}) == 8
    finally:
        for other in others:
            await other.close()


async def test_a_client_vanishing_mid_request_leaves_the_others_served(
    app_server_ws: StartWs, codex_schemas: SchemaPair
) -> None:
    survivor = await app_server_ws()
    url = _url(survivor)
    for _ in range(3):
        doomed = await _raw_connect(url)
        await doomed.send(json.dumps({"id": 1, "method": "initialize", "params": INIT}))
        await doomed.send(json.dumps({"id": 2, "method": "thread/start", "params": {}}))
        await doomed.send(json.dumps({"id": 3, "method": "thread/list", "params": {}}))
        doomed.transport.abort()  # no close frame, no FIN handshake: the socket just disappears
    # Bounded waits: the survivor is answered within the deadline whatever the vanished clients left behind.
    thread = await survivor.call("thread/start", {}, timeout=5.0)
    await survivor.wait_notification("thread/started", timeout=5.0)
    assert thread["thread"]["id"]
    late = await WsAppServerClient.connect(url, codex_schemas, label="ws-late")
    try:
        await late.initialize()
        assert "data" in await late.call("thread/loaded/list", {})
    finally:
        await late.close()
    assert survivor.process is not None and survivor.process.returncode is None
    assert "Traceback" not in survivor.stderr_text, survivor.stderr_text[-3000:]


class _Flood:
    """Send requests whose answers are long, never reading them, until the server stops taking more."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.sent = 0
        self.last_sent_at = time.monotonic()

    async def run(self, limit: int) -> None:
        # The refusal quotes the bad variant, so every ~32 KiB request earns a ~32 KiB reply.
        message = json.dumps({"id": 0, "method": "thread/start", "params": {"sandbox": "v" * 32768}})
        for i in range(limit):
            await self.ws.send(message.replace('"id":0', f'"id":{i + 10}', 1))
            self.sent += 1
            self.last_sent_at = time.monotonic()
            if i % 8 == 0:  # send() rarely suspends: let the rest of this test's event loop run too
                await asyncio.sleep(0)

    def quiet_for(self) -> float:
        """Seconds since the last request went out (long once the server stops reading this client)."""
        return time.monotonic() - self.last_sent_at


@pytest.mark.timeout(60)
async def test_a_client_that_stops_reading_never_stalls_another(app_server_ws: StartWs) -> None:
    other = await app_server_ws()
    url = _url(other)
    # max_queue=1: once one frame is buffered the client stops reading its socket, as a stuck client would.
    stuck = await _raw_connect(url, max_queue=1)
    flood = _Flood(stuck)
    task = asyncio.create_task(flood.run(1_000_000))
    try:
        await stuck.send(json.dumps({"id": 1, "method": "initialize", "params": INIT}))
        # While the replies pile up, and once the server pushes back on the stuck client (bounded memory),
        # the other client is served promptly.
        stalled = False
        for _ in range(200):
            # The flood never ends: a server stalled by it would miss this deadline.
            assert await other.call("thread/loaded/list", {}, timeout=5.0) == {"data": [], "nextCursor": None}
            if flood.quiet_for() > 1.0:
                stalled = True
                break
            await asyncio.sleep(0.1)
        assert stalled, f"the server kept reading a client that reads nothing ({flood.sent} requests)"
        assert not task.done()
        thread = await other.call("thread/start", {}, timeout=5.0)
        await other.wait_notification("thread/started", lambda p: p["thread"]["id"] == thread["thread"]["id"])
    finally:
        task.cancel()
        stuck.transport.abort()
    assert await other.call("thread/loaded/list", {}, timeout=5.0) is not None
    assert other.process is not None and other.process.returncode is None
    assert "Traceback" not in other.stderr_text, other.stderr_text[-3000:]


@pytest.mark.timeout(60)
async def test_a_stuck_subscriber_of_a_shared_thread_does_not_stall_the_other(app_server_ws: StartWs) -> None:
    owner = await app_server_ws()
    thread_id = (await owner.call("thread/start", {}))["thread"]["id"]
    await owner.wait_notification("thread/started")
    stuck = await _raw_connect(_url(owner), max_queue=1)
    flood = _Flood(stuck)
    task: asyncio.Task[None] | None = None
    try:
        await stuck.send(json.dumps({"id": 1, "method": "initialize", "params": INIT}))
        await stuck.send(json.dumps({"id": 2, "method": "thread/resume", "params": {"threadId": thread_id}}))
        while json.loads(await asyncio.wait_for(stuck.recv(), 5.0)).get("id") != 2:
            pass  # subscribed once its resume is answered; then it stops reading
        task = asyncio.create_task(flood.run(1_000_000))
        for _ in range(200):  # until the server stops reading the stuck client: its outbox is full
            await asyncio.sleep(0.1)
            if flood.quiet_for() > 0.6:
                break
        assert flood.quiet_for() > 0.6
        await owner.call("thread/name/set", {"threadId": thread_id, "name": "shared"}, timeout=2.0)
        await owner.wait_notification("thread/name/updated", timeout=2.0)
        assert await owner.call("thread/loaded/list", {}, timeout=2.0)
    finally:
        if task is not None:
            task.cancel()
        stuck.transport.abort()
