"""The view of one client connection that handlers and services get: ``Session``.

A leaf module: it knows the endpoint it writes to and nothing of routing or handlers, so the router,
the handler context and the services can all name it without importing the transport-facing
``app_server.connection``. ``Session`` carries client identity and capabilities, ``notify`` (which honours
opt-outs and experimental-only notifications and stamps ``emittedAtMs``) and ``request`` for
server-to-client requests with a deadline.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from pycodex.transport.endpoint import Endpoint

__all__ = [
    "DEFAULT_SERVER_REQUEST_TIMEOUT_S", "ConnectionClosedError", "Deferred", "ServerRequestTimeout",
    "Session", "now_ms",
]

#: Every server-to-client request has a deadline; callers waiting on a person (approvals) pass their own.
DEFAULT_SERVER_REQUEST_TIMEOUT_S = 300.0
_connection_ids = itertools.count(1)


class Deferred:
    """A handler result answered later: the response is sent when ``result`` finishes, and the
    connection keeps serving other requests meanwhile (command/exec runs while command/exec/write
    and terminate arrive on the same connection)."""

    def __init__(self, result: Awaitable[Any]) -> None:
        self.result = result


class ConnectionClosedError(Exception):
    """The client went away before answering a server request."""


class ServerRequestTimeout(Exception):
    """The client did not answer a server request before its deadline."""


def now_ms() -> int:
    """Wall-clock milliseconds, as Codex stamps ``emittedAtMs``."""
    return int(time.time() * 1000)


class Session:
    """Per-connection state and the outbound API handlers use."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        experimental_notifications: Iterable[str] = (),
        offer: Callable[[bytes], bool] | None = None,
    ) -> None:
        self.id = next(_connection_ids)
        self._endpoint = endpoint
        #: Queues encoded bytes without waiting, or says a write would wait (the outbox's ``offer``).
        self._offer = offer
        self._experimental_notifications = frozenset(experimental_notifications)
        self.initialized = False
        self.client_name = ""
        self.client_version = ""
        #: The stored session source of threads this connection starts ("exec" for ``pycodex exec``).
        self.session_source = "vscode"
        self.client_title: str | None = None
        self.experimental_api = False
        self.opt_out: frozenset[str] = frozenset()
        self.closed = endpoint.closed
        #: Callbacks run once when the connection closes (thread unsubscription, pending approvals).
        self.on_close: list[Callable[[], Any]] = []
        self._after_response: list[Callable[[], Awaitable[None]]] = []
        #: The id of the request being handled (streaming handlers tag their notifications with it).
        self.current_request_id: int | str | None = None

    def after_response(self, callback: Callable[[], Awaitable[None]]) -> None:
        """Run ``callback`` right after the current request's response is written.

        Codex emits e.g. ``thread/started`` after the ``thread/start`` response, not before it.
        """
        self._after_response.append(callback)

    async def run_after_response(self) -> None:
        """Run (once) what the current request scheduled for after its response."""
        callbacks, self._after_response = self._after_response, []
        for callback in callbacks:
            await callback()

    def drop_after_response(self) -> None:
        """The request failed: what was to follow its response must not run."""
        self._after_response.clear()

    # -- outbound ---------------------------------------------------------------------------------
    def wants(self, method: str) -> bool:
        """Whether this client gets ``method``: not opted out, experimental ones only with the capability."""
        if method in self.opt_out:
            return False
        return self.experimental_api or method not in self._experimental_notifications

    async def notify(self, method: str, params: Any) -> None:
        """Send a notification unless the client opted out of it or may not see it."""
        if self.closed.is_set() or not self.wants(method):
            return
        await self._endpoint.notify(method, params, emitted_at_ms=now_ms())

    async def notify_within(self, method: str, params: Any, timeout: float) -> bool:
        """Like ``notify`` but give up after ``timeout`` seconds of a full outbox; False if so."""
        if self.closed.is_set() or not self.wants(method):
            return True
        data = self._endpoint.peer.notify(method, params, emitted_at_ms=now_ms())
        try:
            await asyncio.wait_for(self._endpoint.send(data), timeout)
        except TimeoutError:
            return False
        return True

    def encode_notification(self, method: str, params: Any) -> bytes:
        """The wire bytes of a notification stamped now: what ``broadcast`` hands every connection."""
        return self._endpoint.peer.notify(method, params, emitted_at_ms=now_ms())

    def offer(self, data: bytes) -> bool:
        """Queue already encoded bytes at once if the outbox has room; False when a write would wait (then
        ``send_within``). A closed connection takes (drops) everything."""
        if self.closed.is_set():
            return True
        return self._offer is not None and self._offer(data)

    async def send_within(self, data: bytes, timeout: float) -> bool:
        """Write already encoded bytes, giving up after ``timeout`` seconds of a full outbox; False if so."""
        if self.closed.is_set():
            return True
        if self.offer(data):  # the usual case: no timer at all
            return True
        try:
            # asyncio.timeout, not wait_for: no task per write (3.11's wait_for wraps the write in one and
            # yields to the loop even when the outbox has room, which a broadcast to 500 connections felt).
            async with asyncio.timeout(timeout):
                await self._endpoint.send(data)
        except TimeoutError:
            return False
        return True

    async def send_raw(self, data: bytes) -> None:
        """Write an already-encoded message (the connection's responses)."""
        await self._endpoint.send(data)

    async def request(
        self, method: str, params: Any, *, timeout: float = DEFAULT_SERVER_REQUEST_TIMEOUT_S
    ) -> Any:
        """Send a server-to-client request and wait for its result.

        Raises ``RpcError`` if the client answered with an error, ``ServerRequestTimeout`` after
        ``timeout`` seconds, ``ConnectionClosedError`` if the connection ends first.
        """
        try:
            return await self._endpoint.request(method, params, timeout=timeout)
        except TimeoutError:
            raise ServerRequestTimeout(f"{method} timed out after {timeout} s") from None

    def next_request_id(self) -> int:
        """The id the next server request will get (tests and logs)."""
        return self._endpoint.next_request_id
