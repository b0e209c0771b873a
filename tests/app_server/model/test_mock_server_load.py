"""The mock model under many concurrent clients: every stream completes.

"Under 100 websocket turns with retries off, 3 ended with 'stream disconnected before completion: ReadError'":
the mock server listened with socketserver's default backlog of 5, so connections beyond the accept queue
were reset and httpx reported a bare ReadError. Real sockets on loopback, no timing.
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Iterator

import httpx
import pytest

from app_server.model.mock_server import FakeServer, Script

CLIENTS = 100  # httpx's default pool size: as many connections at once as one model client opens


@pytest.fixture
def server() -> Iterator[FakeServer]:
    script = Script({"responses": [[{"type": "message", "text": "hi " * 50}]], "when_exhausted": "repeat_last"})
    fake = FakeServer(script, None)
    thread = threading.Thread(target=fake.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        fake.stopping.set()
        fake.shutdown()
        fake.server_close()
        thread.join(10)


async def _stream(client: httpx.AsyncClient, url: str) -> str:
    try:
        async with client.stream("POST", url, json={"model": "m", "input": []}) as response:
            body = b"".join([chunk async for chunk in response.aiter_bytes()])
    except httpx.TransportError as exc:
        return type(exc).__name__
    return "completed" if b"response.completed" in body else "incomplete"


async def test_a_hundred_concurrent_streams_all_complete(server: FakeServer) -> None:
    url = f"http://127.0.0.1:{server.server_address[1]}/v1/responses"
    timeout = httpx.Timeout(connect=30, read=60, write=30, pool=60)
    async with httpx.AsyncClient(timeout=timeout) as client:
        results: Counter[str] = Counter()
        for _ in range(2):
            results.update(await asyncio.gather(*(_stream(client, url) for _ in range(CLIENTS))))
    assert results == Counter({"completed": 2 * CLIENTS})
