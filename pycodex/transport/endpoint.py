"""One JSON-RPC connection, whichever side and whichever edge: the ``Endpoint``.

It adds to the sans-IO :class:`~pycodex.jsonrpc.RpcPeer` what every wire needs once: futures for our own
requests (each with a deadline), a bounded queue of inbound requests, and failing every pending request
when the connection ends. The app-server, the exec-server and the exec-server client all sit on it; they
differ only in how they answer what ``receive`` hands back (requests, notifications, violations, strays).

Writes go through ``send``: an :class:`~pycodex.transport.base.Outbox` for servers whose producers must
never block each other, or a transport's own ``send`` where awaiting the socket is the backpressure.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from pycodex.json_types import JsonValue
from pycodex.jsonrpc.codec import ErrorReceived, Message, RequestReceived, ResponseReceived
from pycodex.jsonrpc.errors import RpcError, ServerOverloaded
from pycodex.jsonrpc.peer import ErrorWire, RpcPeer
from pycodex.transport.base import WriteFn

__all__ = ["Endpoint", "EndpointClosed", "rpc_error_from_wire"]


class EndpointClosed(ConnectionError):
    """The connection ended before the remote side answered (the default close error)."""


def rpc_error_from_wire(error: JsonValue) -> RpcError:
    """The error object of a response as an exception (a malformed one still yields one)."""
    body = error if isinstance(error, dict) else {}
    code = body.get("code", -32603)
    return RpcError(str(body.get("message", "client error")), code=code if isinstance(code, int) else -32603)


class Endpoint:
    """Peer, pending outbound requests, bounded inbound request queue and the write side of a connection.

    ``max_queued_requests`` bounds ``requests`` (0 means unbounded); ``offer`` refuses a request with
    -32001 once it is full. ``closed_error`` builds what pending and later requests fail with;
    ``remote_error`` turns a JSON-RPC error object into the exception ``request`` raises; ``error_wire``
    how the peer encodes the errors this side sends (see :class:`~pycodex.jsonrpc.RpcPeer`).
    """

    def __init__(
        self,
        send: WriteFn,
        *,
        include_jsonrpc: bool = False,
        max_queued_requests: int = 0,
        closed_error: Callable[[str], BaseException] = EndpointClosed,
        remote_error: Callable[[JsonValue], BaseException] = rpc_error_from_wire,
        error_wire: ErrorWire | None = None,
    ) -> None:
        self.peer = RpcPeer(include_jsonrpc=include_jsonrpc, error_wire=error_wire)
        self._send = send
        self._pending: dict[int, asyncio.Future[JsonValue]] = {}
        self._closed_error = closed_error
        self._remote_error = remote_error
        self._close_reason = ""
        self.requests: asyncio.Queue[RequestReceived] = asyncio.Queue(max_queued_requests)
        self.closed = asyncio.Event()

    # -- inbound ---------------------------------------------------------------------------------
    def receive(self, raw: bytes | str) -> Message | None:
        """Classify one message. A response to one of our requests is consumed (None comes back);
        everything else, including a response nobody waits for (``method is None``), is the caller's."""
        msg = self.peer.receive(raw)
        if isinstance(msg, ResponseReceived | ErrorReceived) and msg.method is not None:
            future = self._pending.get(msg.id)
            if future is not None and not future.done():
                if isinstance(msg, ResponseReceived):
                    future.set_result(msg.result)
                else:
                    future.set_exception(self._remote_error(msg.error))
            return None
        return msg

    async def offer(self, request: RequestReceived) -> bool:
        """Queue an inbound request; if the queue is full answer it with -32001 and return False."""
        try:
            self.requests.put_nowait(request)
        except asyncio.QueueFull:
            await self._send(self.peer.respond_error(request.id, ServerOverloaded()))
            return False
        return True

    # -- outbound --------------------------------------------------------------------------------
    async def send(self, data: bytes) -> None:
        """Write already encoded bytes (an answer the caller encoded with ``peer``)."""
        await self._send(data)

    async def notify(self, method: str, params: object, *, emitted_at_ms: int | None = None) -> None:
        """Encode and write a notification; ``emitted_at_ms`` for wires that stamp them."""
        await self._send(self.peer.notify(method, params, emitted_at_ms=emitted_at_ms))

    async def request(self, method: str, params: object, *, timeout: float | None) -> JsonValue:
        """Send a request and wait for its result.

        Raises ``remote_error(...)`` for an error answer, ``TimeoutError`` after ``timeout`` seconds (a
        late answer is then a stray), ``closed_error(...)`` if the connection is or becomes closed.
        """
        if self.closed.is_set():
            raise self._closed_error(self._close_reason)
        request_id, data = self.peer.request(method, params)
        future: asyncio.Future[JsonValue] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await self._send(data)
            return await asyncio.wait_for(future, timeout)
        finally:
            self._pending.pop(request_id, None)
            self.peer.forget(request_id)

    @property
    def next_request_id(self) -> int:
        """The id the next outbound request will get (tests and logs)."""
        return self.peer.next_request_id

    @property
    def pending_count(self) -> int:
        """Our requests still waiting for an answer."""
        return len(self._pending)

    # -- end -------------------------------------------------------------------------------------
    def close(self, reason: str) -> None:
        """The connection ended: fail every pending request; later ones fail at once. Idempotent."""
        if self.closed.is_set():
            return
        self._close_reason = reason
        self.closed.set()
        for future in self._pending.values():
            if not future.done():
                future.set_exception(self._closed_error(reason))
