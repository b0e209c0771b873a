"""The shared Endpoint and the in-memory edge: correlation, deadlines, the inbound bound, the end."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from pycodex.jsonrpc import LocalRpcError, RequestReceived, ResponseReceived, RpcError
from pycodex.transport.base import Outbox, TransportClosed, serve_transport
from pycodex.transport.endpoint import Endpoint, EndpointClosed
from pycodex.transport.memory import MemoryTransport, memory_pair

WAIT = 5.0


class Pair:
    """A client Endpoint and a scripted server on the two ends of a memory pair."""

    def __init__(self, **client_kwargs: Any) -> None:
        self.client_end, self.server_end = memory_pair()
        self.client = Endpoint(self.client_end.send, **client_kwargs)
        self.server = Endpoint(self.server_end.send, max_queued_requests=2)
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        try:
            while (raw := await self.client_end.recv()) is not None:
                self.client.receive(raw)
        finally:
            self.client.close("server went away")

    async def next_request(self) -> RequestReceived:
        raw = await asyncio.wait_for(self.server_end.recv(), WAIT)
        assert raw is not None
        msg = self.server.receive(raw)
        assert isinstance(msg, RequestReceived)
        return msg

    async def aclose(self) -> None:
        await self.client_end.close()
        await asyncio.wait_for(self._reader, WAIT)


async def test_a_request_gets_its_result_and_an_error_answer_raises() -> None:
    pair = Pair()
    call = asyncio.ensure_future(pair.client.request("echo", {"x": 1}, timeout=WAIT))
    req = await pair.next_request()
    assert (req.method, req.params) == ("echo", {"x": 1})
    await pair.server.send(pair.server.peer.respond(req.id, {"y": 2}))
    assert await asyncio.wait_for(call, WAIT) == {"y": 2}

    failing = asyncio.ensure_future(pair.client.request("boom", None, timeout=WAIT))
    req = await pair.next_request()
    assert req.has_params is False
    await pair.server.send(pair.server.peer.respond_error(req.id, RpcError("nope", code=-32099)))
    with pytest.raises(RpcError) as error:
        await asyncio.wait_for(failing, WAIT)
    assert (error.value.message, error.value.wire_code) == ("nope", -32099)
    assert pair.client.pending_count == 0
    await pair.aclose()


async def test_closing_fails_every_pending_request_and_later_ones_at_once() -> None:
    pair = Pair()
    calls = [asyncio.ensure_future(pair.client.request(f"m{i}", {}, timeout=WAIT)) for i in range(3)]
    for _ in calls:
        await pair.next_request()
    await pair.server_end.close()  # the server goes away without answering
    for call in calls:
        with pytest.raises(EndpointClosed, match="server went away"):
            await asyncio.wait_for(call, WAIT)
    with pytest.raises(EndpointClosed):
        await pair.client.request("late", {}, timeout=WAIT)
    await pair.aclose()


async def test_the_close_error_is_the_owners() -> None:
    class Gone(Exception):
        pass

    pair = Pair(closed_error=Gone)
    call = asyncio.ensure_future(pair.client.request("m", {}, timeout=WAIT))
    await pair.next_request()
    pair.client.close("bye")
    with pytest.raises(Gone, match="bye"):
        await asyncio.wait_for(call, WAIT)
    await pair.aclose()


async def test_a_deadline_forgets_the_request_so_a_late_answer_is_a_stray() -> None:
    pair = Pair()
    call = asyncio.ensure_future(pair.client.request("slow", {}, timeout=0.05))
    req = await pair.next_request()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(call, WAIT)
    assert pair.client.pending_count == 0
    late = pair.server.peer.respond(req.id, {})
    stray = pair.client.receive(late)
    assert isinstance(stray, ResponseReceived) and stray.method is None and stray.id == req.id
    await pair.aclose()


async def test_inbound_requests_beyond_the_bound_are_refused_with_32001() -> None:
    pair = Pair()
    for i in range(3):
        await pair.client.send(json.dumps({"id": i, "method": "work"}).encode())
    accepted = [await pair.server.offer(await pair.next_request()) for _ in range(3)]
    assert accepted == [True, True, False]
    assert pair.server.requests.qsize() == 2
    assert not pair.server.peer.is_in_flight(2)  # answered: -32001 is its one response
    assert pair.server.peer.is_in_flight(0) and pair.server.peer.is_in_flight(1)
    await pair.aclose()


async def _recv(end: MemoryTransport) -> bytes:
    raw = await asyncio.wait_for(end.recv(), WAIT)
    assert raw is not None
    return raw


async def test_the_refusal_is_the_single_answer_on_the_wire() -> None:
    client_end, server_end = memory_pair()
    server = Endpoint(server_end.send, max_queued_requests=1)
    for i in range(2):
        await client_end.send(json.dumps({"id": i, "method": "work"}).encode())
    for _ in range(2):
        raw = await asyncio.wait_for(server_end.recv(), WAIT)
        assert raw is not None
        msg = server.receive(raw)
        assert isinstance(msg, RequestReceived)
        await server.offer(msg)
    reply = json.loads(await _recv(client_end))
    assert reply == {"id": 1, "error": {"code": -32001, "message": "Server overloaded; retry later."}}
    queued = server.requests.get_nowait()
    await server.send(server.peer.respond(queued.id, "done"))
    with pytest.raises(LocalRpcError):
        server.peer.respond(queued.id, "again")  # exactly one answer per request
    assert json.loads(await _recv(client_end)) == {"id": 0, "result": "done"}


async def test_memory_pair_keeps_order_and_ends_both_directions() -> None:
    a, b = memory_pair()
    for i in range(5):
        await a.send(b"%d" % i)
    await a.close()
    assert [await asyncio.wait_for(b.recv(), WAIT) for _ in range(6)] == [b"0", b"1", b"2", b"3", b"4", None]
    assert await b.recv() is None  # the end stays the end
    with pytest.raises(TransportClosed):
        await b.send(b"x")
    with pytest.raises(TransportClosed):
        await a.send(b"x")


async def test_a_writer_blocked_on_a_full_pair_is_released_when_the_reader_closes() -> None:
    a, b = memory_pair(max_queued=1)
    await a.send(b"first")
    blocked = asyncio.ensure_future(a.send(b"second"))
    await asyncio.sleep(0)
    assert not blocked.done()
    await b.close()
    with pytest.raises(TransportClosed):  # nobody will read it: the writer learns so at once
        await asyncio.wait_for(blocked, WAIT)


class _Echo:
    """A minimal MessageHandler: answers every request with its params, records the close."""

    def __init__(self, outbox: Outbox) -> None:
        self.endpoint = Endpoint(outbox.send)
        self.closed = asyncio.Event()

    async def on_message(self, raw: bytes) -> None:
        msg = self.endpoint.receive(raw)
        if isinstance(msg, RequestReceived):
            await self.endpoint.send(self.endpoint.peer.respond(msg.id, msg.params))

    async def on_line_too_long(self, size: int) -> None:
        raise AssertionError("a message transport has no lines")

    async def on_close(self) -> None:
        self.closed.set()


async def test_serve_transport_drives_a_handler_until_the_client_closes() -> None:
    client_end, server_end = memory_pair()
    handlers: list[_Echo] = []

    def make(outbox: Outbox) -> _Echo:
        handlers.append(_Echo(outbox))
        return handlers[-1]

    server = asyncio.ensure_future(serve_transport(make, server_end))
    client = Endpoint(client_end.send)

    async def read(end: MemoryTransport) -> None:
        while (raw := await end.recv()) is not None:
            client.receive(raw)

    reader = asyncio.ensure_future(read(client_end))
    assert await client.request("echo", [1, "two"], timeout=WAIT) == [1, "two"]
    await client_end.close()
    await asyncio.wait_for(server, WAIT)
    await asyncio.wait_for(reader, WAIT)
    assert handlers[0].closed.is_set()
