"""The executor's websocket keepalive: a rendezvous that never answers pings is dropped and redialed.

The "rendezvous" here is a raw TCP server that completes the websocket upgrade and then reads and
ignores everything (so no Pong ever comes back). Intervals are shortened; 0.169.0 uses 30 s / 60 s.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib

import httpx

from exec_client.remote import Registration
from exec_client.wire.noise import HybridStaticKey
from exec_server.remote import Keepalive, RegistryClient, RemoteExecutor
from tests.support.remote import ENV_ID, STEP, TOKEN, fast_backoff

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


async def test_no_pong_within_the_timeout_drops_the_websocket_and_redials_the_same_url() -> None:
    upgrades: list[str] = []

    async def silent_rendezvous(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        upgrades.append(head.split("\r\n")[0])
        key = next(
            line.split(":", 1)[1].strip()
            for line in head.split("\r\n")
            if line.lower().startswith("sec-websocket-key")
        )
        accept = base64.b64encode(hashlib.sha1(key.encode() + _GUID).digest()).decode()
        writer.write(
            f"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Accept: {accept}\r\n\r\n".encode()
        )
        with contextlib.suppress(ConnectionError):
            while await reader.read(4096):  # swallow pings; never answer
                pass
        writer.close()

    server = await asyncio.start_server(silent_rendezvous, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with httpx.AsyncClient() as http:
        executor = RemoteExecutor(
            RegistryClient(http, "http://127.0.0.1:9", ENV_ID, TOKEN),
            lambda _channel: asyncio.sleep(0),
            static_key=HybridStaticKey.generate(),
            backoff=fast_backoff(),
            keepalive=Keepalive(ping_interval=0.2, pong_timeout=0.3),
        )
        executor.registration = Registration(
            ENV_ID, f"ws://127.0.0.1:{port}/relay/x?role=environment", "reg-1"
        )
        task = asyncio.create_task(executor.serve_forever())
        try:
            for _ in range(int(STEP / 0.05)):
                if executor.connections >= 2:
                    break
                await asyncio.sleep(0.05)
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait_for(task, STEP)
            server.close()
    assert executor.connections >= 2
    assert upgrades[:2] == ["GET /relay/x?role=environment HTTP/1.1"] * 2
