"""A v2 JSON-RPC client of an ``AppServer`` in this process, with the server's requests handed to a callback.

Unlike ``pycodex exec``'s client (which declines every approval), server requests are answered by
``on_request`` in a task of their own, so an approval waiting for the editor's user never stalls the stream.
Notifications are routed by their ``threadId`` to the queue the thread's session subscribed (others dropped).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from pycodex.json_types import JsonObj
from pycodex.jsonrpc import NotificationReceived, RequestReceived, RpcError
from pycodex.jsonrpc.errors import INTERNAL_ERROR
from pycodex.transport.base import MessageHandler, Outbox, serve_transport
from pycodex.transport.endpoint import Endpoint, EndpointClosed
from pycodex.transport.memory import memory_pair

if TYPE_CHECKING:
    from app_server.app import AppServer

__all__ = ["AppServerBridge", "BridgeError", "Notice", "ServerRequestHandler"]

logger = logging.getLogger(__name__)

#: One notification of the app-server: (method, params); ``None`` once the connection ended.
Notice = tuple[str, JsonObj] | None
#: Answers one server request (method, params) with its result; raising ``BridgeError`` sends an error.
ServerRequestHandler = Callable[[str, JsonObj], Awaitable[JsonObj]]
#: Bound on a request that is not a turn (thread/start may start MCP servers and a shell snapshot).
REQUEST_TIMEOUT_S = 120.0
CLOSE_TIMEOUT_S = 5.0


class BridgeError(Exception):
    """The app-server answered a request with an error (or the connection ended first)."""

    def __init__(self, method: str, message: str, code: int = INTERNAL_ERROR) -> None:
        super().__init__(message)
        self.method = method
        self.message = message
        self.code = code


class AppServerBridge:
    """One connection to ``app``: requests, per-thread notification queues, server requests to ``on_request``."""

    def __init__(self, app: AppServer, on_request: ServerRequestHandler) -> None:
        self.app = app
        self._on_request = on_request
        self._client, self._server = memory_pair()
        self._endpoint = Endpoint(self._client.send)
        self._queues: dict[str, asyncio.Queue[Notice]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._main: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Serve the connection and read the server's messages."""
        loop = asyncio.get_running_loop()
        self._main = [loop.create_task(serve_transport(self._connection, self._server), name="acp-app-server"),
                      loop.create_task(self._read_loop(), name="acp-app-server-reader")]

    def _connection(self, outbox: Outbox) -> MessageHandler:
        return self.app.connection(outbox)

    def subscribe(self, thread_id: str) -> asyncio.Queue[Notice]:
        """The queue the notifications of ``thread_id`` go to from now on (one per thread)."""
        return self._queues.setdefault(thread_id, asyncio.Queue())

    def unsubscribe(self, thread_id: str) -> None:
        """Stop routing the thread's notifications (its session closed)."""
        self._queues.pop(thread_id, None)

    async def _read_loop(self) -> None:
        try:
            while (raw := await self._client.recv()) is not None:
                msg = self._endpoint.receive(raw)
                if isinstance(msg, RequestReceived):
                    task = asyncio.get_running_loop().create_task(self._answer(msg))
                    self._tasks.add(task)
                    task.add_done_callback(self._tasks.discard)
                elif isinstance(msg, NotificationReceived):
                    params = dict(msg.params) if isinstance(msg.params, dict) else {}
                    queue = self._queues.get(str(params.get("threadId", "")))
                    if queue is not None:
                        queue.put_nowait((msg.method, params))
        finally:
            self._endpoint.close("the app-server closed the connection")
            for queue in self._queues.values():
                queue.put_nowait(None)

    async def _answer(self, msg: RequestReceived) -> None:
        params = dict(msg.params) if isinstance(msg.params, dict) else {}
        peer = self._endpoint.peer
        try:
            data = peer.respond(msg.id, await self._on_request(msg.method, params))
        except BridgeError as exc:
            data = peer.respond_error(msg.id, RpcError(exc.message, code=exc.code))
        except Exception as exc:  # the editor went away mid-question: the server must still get its one answer
            logger.warning("answering %s failed: %s", msg.method, exc)
            data = peer.respond_error(msg.id, RpcError(f"the ACP client did not answer: {exc}", code=INTERNAL_ERROR))
        with contextlib.suppress(ConnectionError):
            await self._endpoint.send(data)

    async def request(self, method: str, params: JsonObj, *, timeout: float | None = REQUEST_TIMEOUT_S) -> JsonObj:
        """Send a request and wait (``timeout``; None for a turn's own lifetime) for its result."""
        try:
            result = await self._endpoint.request(method, params, timeout=timeout)
        except RpcError as exc:
            raise BridgeError(method, exc.message, exc.wire_code) from None
        except EndpointClosed as exc:
            raise BridgeError(method, str(exc)) from None
        return dict(result) if isinstance(result, dict) else {}

    async def notify(self, method: str) -> None:
        """Send a notification without params."""
        await self._endpoint.notify(method, None)

    async def close(self) -> None:
        """End the connection; the server answers what it had read, then both sides stop."""
        await self._client.close()
        for task in list(self._tasks):
            task.cancel()
        _done, pending = await asyncio.wait(self._main, timeout=CLOSE_TIMEOUT_S) if self._main else (set(), set())
        for task in pending:
            task.cancel()
        self._endpoint.close("closed")
