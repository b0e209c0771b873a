"""An in-memory JSON-RPC client for an ``AppServer`` running in this process.

``pycodex exec`` talks to the app-server exactly as an IDE would (``initialize``, ``thread/start``,
``turn/start``...), but over the in-memory edge (:func:`pycodex.transport.memory.memory_pair`) instead
of a pipe, with the same ``Endpoint`` every other client uses. Server-to-client requests (approvals) are declined, as a
non-interactive run cannot ask anybody. :class:`TransportClient` is the same client over any message transport
(``exec --remote`` puts it on a WebSocket). A client that answers server requests or routes notifications
itself (``pycodex acp``'s bridge) overrides ``on_request``, ``on_notification`` and ``on_closed``.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from pycodex.json_types import JsonObj
from pycodex.jsonrpc import NotificationReceived, RequestReceived, RpcError
from pycodex.jsonrpc.errors import INTERNAL_ERROR
from pycodex.transport.base import MessageHandler, Outbox, Transport, serve_transport
from pycodex.transport.endpoint import Endpoint, EndpointClosed
from pycodex.transport.memory import memory_pair

if TYPE_CHECKING:  # the remote client has no server in this process
    from app_server.app import AppServer

__all__ = ["InProcessClient", "RequestFailed", "TransportClient"]

#: How long one request may take before the run gives up (a stuck server must not hang exec).
REQUEST_TIMEOUT_S = 60.0
#: How long ``close`` waits for the server to answer what it had read and stop.
CLOSE_TIMEOUT_S = 5.0


class RequestFailed(Exception):
    """The server answered a request with a JSON-RPC error (or the connection ended first)."""

    def __init__(self, method: str, message: str, code: int = INTERNAL_ERROR) -> None:
        super().__init__(message)
        self.method = method
        self.message = message
        self.code = code


class TransportClient:
    """A JSON-RPC client of an app-server over one message transport (its reader runs from ``start``)."""

    def __init__(self, transport: Transport) -> None:
        self._client = transport
        self._endpoint = Endpoint(self._client.send)
        self.notifications: asyncio.Queue[tuple[str, JsonObj]] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Start reading the server's messages."""
        self._tasks = [asyncio.get_running_loop().create_task(self._read_loop(), name="app-server-client-reader")]

    async def close(self) -> None:
        """End the connection: the server answers what it had already read, then both sides stop."""
        await self._client.close()
        _done, pending = await asyncio.wait(self._tasks, timeout=CLOSE_TIMEOUT_S)
        for task in pending:
            task.cancel()
        self._endpoint.close("client closed")

    async def _read_loop(self) -> None:
        try:
            while (raw := await self._client.recv()) is not None:
                msg = self._endpoint.receive(raw)
                if isinstance(msg, RequestReceived):
                    await self.on_request(msg)
                elif isinstance(msg, NotificationReceived):
                    params = msg.params if isinstance(msg.params, dict) else {}
                    await self.on_notification(msg.method, dict(params))
        except ConnectionError:
            pass  # closed while answering a server request
        finally:
            self._endpoint.close("the app-server closed the connection")
            self.on_closed()

    async def on_request(self, msg: RequestReceived) -> None:
        """A server request: nobody can answer it in exec, so an approval is declined."""
        await self._endpoint.send(self._endpoint.peer.respond(msg.id, _decline(msg.method)))

    async def on_notification(self, method: str, params: JsonObj) -> None:
        """A server notification: queued on ``notifications``."""
        await self.notifications.put((method, params))

    def on_closed(self) -> None:
        """The server closed the connection (or the client did): nothing more will be read."""

    async def request(self, method: str, params: JsonObj, *, timeout: float | None = REQUEST_TIMEOUT_S) -> JsonObj:
        """Send a request and wait (bounded by ``timeout``; None: as long as it takes) for its result;
        `RequestFailed` on an error."""
        try:
            result = await self._endpoint.request(method, params, timeout=timeout)
        except RpcError as exc:
            raise RequestFailed(method, exc.message, exc.wire_code) from None
        except EndpointClosed as exc:
            raise RequestFailed(method, str(exc), INTERNAL_ERROR) from None
        return dict(result or {})

    async def notify(self, method: str) -> None:
        """Send a notification without params; a closed connection is ignored."""
        with contextlib.suppress(Exception):
            await self._endpoint.notify(method, None)


class InProcessClient(TransportClient):
    """A JSON-RPC client of an app-server in this process, over an in-memory transport."""

    def __init__(self, app: AppServer, *, session_source: str | None = "exec") -> None:
        client, self._server = memory_pair()
        super().__init__(client)
        self._app = app
        self._session_source = session_source

    async def start(self) -> None:
        """Start serving the connection and reading the server's messages."""
        await super().start()
        serve = serve_transport(self._connection, self._server)
        self._tasks.append(asyncio.get_running_loop().create_task(serve, name="inproc-app-server"))

    def _connection(self, outbox: Outbox) -> MessageHandler:
        connection = self._app.connection(outbox)
        if self._session_source is not None:  # None: the connection's own (an IDE's)
            connection.session.session_source = self._session_source
        return connection


def _decline(method: str) -> JsonObj:
    if method in ("item/commandExecution/requestApproval", "item/fileChange/requestApproval"):
        return {"decision": "decline"}
    if method in ("execCommandApproval", "applyPatchApproval"):
        return {"decision": "denied"}
    return {}
