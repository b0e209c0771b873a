"""``WebSocketTransport.send_many``: several messages joined into one socket write, each still its own
text (or binary) frame, on both sides of a real loopback websocket (the server builds frames itself, the client
lets websockets mask them)."""

from __future__ import annotations

import asyncio

import pytest
from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection
from websockets.http11 import Request, Response

from pycodex.transport.base import TransportClosed
from pycodex.transport.websocket import WebSocketTransport, listen_websocket

STEP = 10.0
# Sizes around each header form (7-bit, 16-bit and 64-bit lengths), one of them non-ASCII.
MESSAGES = [
    b"",
    b'{"a":1}',
    b"x" * 125,
    b"y" * 126,
    '{"s":"\u00e9\u2028\U0001f600"}'.encode(),
    b"z" * 65535,
    b"w" * 65536,
    b"v" * 200_000,
]


def _no_gate(_conn: ServerConnection, _request: Request) -> Response | None:
    return None


@pytest.mark.parametrize("binary", [False, True])
async def test_the_server_side_sends_each_message_of_a_batch_as_its_own_frame(binary: bool) -> None:
    sent = asyncio.Event()

    async def handler(ws: ServerConnection) -> None:
        await WebSocketTransport(ws).send_many(MESSAGES, binary=binary)
        sent.set()
        await ws.wait_closed()

    server = await listen_websocket(handler, "127.0.0.1", 0, gate=_no_gate, max_message_bytes=1 << 20)
    port = next(iter(server.sockets)).getsockname()[1]
    try:
        async with connect(f"ws://127.0.0.1:{port}", compression=None, max_size=1 << 20) as client:
            got = [await asyncio.wait_for(client.recv(), STEP) for _ in MESSAGES]
            await asyncio.wait_for(sent.wait(), STEP)
        assert all(isinstance(frame, bytes if binary else str) for frame in got)  # the frames' opcode
        assert [frame.encode() if isinstance(frame, str) else frame for frame in got] == MESSAGES
    finally:
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize("binary", [False, True])
async def test_the_client_side_batch_is_masked_by_websockets_and_arrives_intact(binary: bool) -> None:
    received: asyncio.Queue[bytes | None] = asyncio.Queue()

    async def handler(ws: ServerConnection) -> None:
        edge = WebSocketTransport(ws)
        while (message := await edge.recv()) is not None:
            received.put_nowait(message)
        received.put_nowait(None)

    server = await listen_websocket(handler, "127.0.0.1", 0, gate=_no_gate, max_message_bytes=1 << 20)
    port = next(iter(server.sockets)).getsockname()[1]
    try:
        async with connect(f"ws://127.0.0.1:{port}", compression=None) as ws:
            await WebSocketTransport(ws).send_many(MESSAGES, binary=binary)
            got = [await asyncio.wait_for(received.get(), STEP) for _ in MESSAGES]
        assert got == MESSAGES
    finally:
        server.close()
        await server.wait_closed()


async def test_a_batch_on_a_closed_connection_raises_transport_closed() -> None:
    closed = asyncio.Event()
    outcome: asyncio.Future[Exception | None] = asyncio.get_running_loop().create_future()

    async def handler(ws: ServerConnection) -> None:
        await ws.wait_closed()
        closed.set()
        try:
            await WebSocketTransport(ws).send_many([b"{}", b"{}"])
        except Exception as exc:  # the test inspects it
            outcome.set_result(exc)
        else:
            outcome.set_result(None)

    server = await listen_websocket(handler, "127.0.0.1", 0, gate=_no_gate, max_message_bytes=1 << 20)
    port = next(iter(server.sockets)).getsockname()[1]
    try:
        async with connect(f"ws://127.0.0.1:{port}"):
            pass
        await asyncio.wait_for(closed.wait(), STEP)
        error = await asyncio.wait_for(outcome, STEP)
        assert isinstance(error, TransportClosed)
    finally:
        server.close()
        await server.wait_closed()
