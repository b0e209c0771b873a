"""A v2 JSON-RPC client of an ``AppServer`` in this process, with the server's requests handed to a callback.

It is ``pycodex exec``'s in-process client (``pycodex/exec_cli/inproc.py``), except that server requests are
answered by ``on_request`` in a task of their own, so an approval waiting for the editor's user never stalls the stream.
Notifications are routed by their ``threadId`` to the queue the thread's session subscribed (others dropped).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from pycodex.exec_cli.inproc import InProcessClient, RequestFailed
from pycodex.json_types import JsonObj
from pycodex.jsonrpc import RequestReceived, RpcError
from pycodex.jsonrpc.errors import INTERNAL_ERROR

if TYPE_CHECKING:
    from app_server.app import AppServer

__all__ = ["AppServerBridge", "Notice", "ServerRequestHandler"]

logger = logging.getLogger(__name__)

#: One notification of the app-server: (method, params); ``None`` once the connection ended.
Notice = tuple[str, JsonObj] | None
#: Answers one server request (method, params) with its result; raising ``RequestFailed`` sends an error.
ServerRequestHandler = Callable[[str, JsonObj], Awaitable[JsonObj]]
#: Bound on a request that is not a turn (thread/start may start MCP servers and a shell snapshot).
REQUEST_TIMEOUT_S = 120.0


class AppServerBridge(InProcessClient):
    """``pycodex exec``'s in-process client, with server requests answered by ``on_request`` (each in a task of
    its own) and notifications routed to per-thread queues."""

    def __init__(self, app: AppServer, on_request: ServerRequestHandler) -> None:
        super().__init__(app, session_source=None)
        self._answer_request = on_request
        self._queues: dict[str, asyncio.Queue[Notice]] = {}
        self._answers: set[asyncio.Task[None]] = set()

    def subscribe(self, thread_id: str) -> asyncio.Queue[Notice]:
        """The queue the notifications of ``thread_id`` go to from now on (one per thread)."""
        return self._queues.setdefault(thread_id, asyncio.Queue())

    def unsubscribe(self, thread_id: str) -> None:
        """Stop routing the thread's notifications (its session closed)."""
        self._queues.pop(thread_id, None)

    async def on_request(self, msg: RequestReceived) -> None:
        """Answered in a task of its own: an approval waiting for the editor's user never stalls the stream."""
        task = asyncio.get_running_loop().create_task(self._answer(msg))
        self._answers.add(task)
        task.add_done_callback(self._answers.discard)

    async def on_notification(self, method: str, params: JsonObj) -> None:
        """To the queue of the thread it names; one of no subscribed thread is dropped."""
        queue = self._queues.get(str(params.get("threadId", "")))
        if queue is not None:
            queue.put_nowait((method, params))

    def on_closed(self) -> None:
        """Every subscribed session learns that the connection ended."""
        for queue in self._queues.values():
            queue.put_nowait(None)

    async def _answer(self, msg: RequestReceived) -> None:
        params = dict(msg.params) if isinstance(msg.params, dict) else {}
        peer = self._endpoint.peer
        try:
            data = peer.respond(msg.id, await self._answer_request(msg.method, params))
        except RequestFailed as exc:
            data = peer.respond_error(msg.id, RpcError(exc.message, code=exc.code))
        except Exception as exc:  # the editor went away mid-question: the server must still get its one answer
            logger.warning("answering %s failed: %s", msg.method, exc)
            data = peer.respond_error(msg.id, RpcError(f"the ACP client did not answer: {exc}", code=INTERNAL_ERROR))
        with contextlib.suppress(ConnectionError):
            await self._endpoint.send(data)

    async def request(self, method: str, params: JsonObj, *, timeout: float | None = REQUEST_TIMEOUT_S) -> JsonObj:
        """Send a request and wait (``timeout``; None for a turn's own lifetime) for its result."""
        return await super().request(method, params, timeout=timeout)

    async def close(self) -> None:
        """End the connection (questions still waiting for the editor are dropped with it)."""
        for task in list(self._answers):
            task.cancel()
        await super().close()
