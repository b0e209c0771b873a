"""One client connection of the app-server: its session state, inbound queue and outbound requests.

``AppConnection`` is what a transport drives (see :mod:`pycodex.transport`). It feeds raw messages to
the sans-IO peer, answers wire violations the way Codex does (no reply, one stderr line), queues
requests for a single dispatcher task (so responses and the notifications handlers emit stay in arrival
order), and refuses requests with -32001 once the inbound queue is full.

``Session`` is the view handlers get: client identity and capabilities, ``notify`` (which honours
opt-outs and experimental-only notifications and stamps ``emittedAtMs``) and ``request`` for
server-to-client requests with a deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from app_server.router import Router
from pycodex.jsonrpc import (
    ErrorReceived,
    NotificationReceived,
    RequestReceived,
    ResponseReceived,
    RpcError,
    Violation,
)
from pycodex.jsonrpc.errors import InternalError, InvalidRequest
from pycodex.trace import recorder as trace
from pycodex.transport.base import Outbox
from pycodex.transport.endpoint import Endpoint

__all__ = ["AppConnection", "ConnectionClosedError", "Deferred", "ServerRequestTimeout", "Session"]

logger = logging.getLogger(__name__)

DEFAULT_MAX_QUEUED_REQUESTS = 256
#: How long a closing connection keeps answering the requests it had already received.
DRAIN_ON_CLOSE_S = 2.0
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
    return int(time.time() * 1000)


class Session:
    """Per-connection state and the outbound API handlers use."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        app: Any,
        experimental_notifications: Iterable[str] = (),
    ) -> None:
        self.id = next(_connection_ids)
        self.app = app
        self._endpoint = endpoint
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
        callbacks, self._after_response = self._after_response, []
        for callback in callbacks:
            await callback()

    def drop_after_response(self) -> None:
        """The request failed: what was to follow its response must not run."""
        self._after_response.clear()

    # -- outbound ---------------------------------------------------------------------------------
    def wants(self, method: str) -> bool:
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

    async def send_raw(self, data: bytes) -> None:
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


class AppConnection:
    """Transport-facing handler for one connection (implements ``MessageHandler``)."""

    def __init__(
        self,
        outbox: Outbox,
        router: Router,
        *,
        app: Any,
        max_queued_requests: int = DEFAULT_MAX_QUEUED_REQUESTS,
        experimental_notifications: Iterable[str] = (),
        on_initialized: Callable[[], None] | None = None,
        early_answer: bytes | None = None,
    ) -> None:
        send = outbox.send
        if trace.active_tracer() is not None:  # record what goes out; no cost when no trace is written

            async def send(data: bytes) -> None:
                trace.record("out", "client", self.session.id, data)
                await outbox.send(data)

        self._endpoint = Endpoint(send, max_queued_requests=max_queued_requests, closed_error=ConnectionClosedError)
        self._peer = self._endpoint.peer
        self._router = router
        self.session = Session(self._endpoint, app=app, experimental_notifications=experimental_notifications)
        self._queue = self._endpoint.requests
        self._busy = False
        self._on_initialized = on_initialized
        #: The stdio fast path already wrote this answer to the initialize that comes first (app_server/
        #: startup.py): that request is replayed to set up the session, and its answer held back.
        self._early_answer = early_answer
        self._deferred: set[asyncio.Task[None]] = set()
        self._dispatcher = asyncio.get_running_loop().create_task(self._dispatch_loop(), name="dispatch")

    async def on_message(self, raw: bytes) -> None:
        trace.record("in", "client", self.session.id, raw)
        msg = self._endpoint.receive(raw)
        if isinstance(msg, RequestReceived):
            if msg.duplicate:
                err = InvalidRequest(f"duplicate request id {msg.id!r}: a request with this id is in flight")
                await self.session.send_raw(self._peer.error_untracked(msg.id, err))
                return
            await self._endpoint.offer(msg)
        elif isinstance(msg, ResponseReceived | ErrorReceived):  # ours were consumed: this is a stray
            logger.warning("could not find callback for server request id %r", msg.id)
        elif isinstance(msg, NotificationReceived):
            if msg.method != "initialized":
                logger.info("ignoring client notification %s", msg.method)
            elif self._on_initialized is not None:
                self._on_initialized()
        elif isinstance(msg, Violation):
            # The reason only, never the line itself: a malformed line may still carry a key or token.
            logger.error("Failed to deserialize JSONRPCMessage: %s (%d bytes)", msg.reason, len(raw))

    async def on_line_too_long(self, size: int) -> None:
        logger.error("Failed to deserialize JSONRPCMessage: line of %d bytes exceeds the limit", size)

    async def on_close(self) -> None:
        session = self.session
        # Requests that arrived before EOF still get their one response (stdout is still open on stdio).
        if not self._queue.empty() or self._busy:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._queue.join(), DRAIN_ON_CLOSE_S)
        self._endpoint.close("connection closed")
        self._dispatcher.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._dispatcher
        for callback in session.on_close:
            try:
                result = callback()
                if asyncio.iscoroutine(result):
                    await result
            except Exception:
                logger.exception("close callback failed")

    async def _dispatch_loop(self) -> None:
        while True:
            req = await self._queue.get()
            self._busy = True
            try:
                await self._dispatch_one(req)
            except Exception:  # one broken request must not end the connection's dispatcher
                logger.exception("dispatch of %s failed", req.method)
            finally:
                self._busy = False
                self._queue.task_done()

    async def _answer_later(self, req: RequestReceived, deferred: Deferred) -> None:
        try:
            data = self._peer.respond(req.id, await deferred.result)
        except RpcError as exc:
            data = self._peer.respond_error(req.id, exc)
        except Exception:
            logger.exception("internal error while handling %s", req.method)
            data = self._peer.respond_error(req.id, InternalError(f"internal error while handling {req.method}"))
        if not self.session.closed.is_set():
            await self.session.send_raw(data)

    async def _dispatch_one(self, req: RequestReceived) -> None:
        self.session.current_request_id = req.id
        try:
            result = await self._router.dispatch(self.session, req.method, req.params, req.has_params)
            if isinstance(result, Deferred):
                task = asyncio.get_running_loop().create_task(self._answer_later(req, result))
                self._deferred.add(task)
                task.add_done_callback(self._deferred.discard)
                return
            data = self._peer.respond(req.id, result)
        except RpcError as exc:
            self.session.drop_after_response()
            await self._answer(req, self._peer.respond_error(req.id, exc))
            return
        except (TypeError, ValueError):  # a result that is not JSON: a bug here, still answered
            logger.exception("result of %s is not JSON-serialisable", req.method)
            self.session.drop_after_response()
            error = InternalError(f"internal error while handling {req.method}")
            await self._answer(req, self._peer.respond_error(req.id, error))
            return
        await self._answer(req, data)
        try:
            await self.session.run_after_response()
        except Exception:
            logger.exception("post-response step of %s failed", req.method)

    async def _answer(self, req: RequestReceived, data: bytes) -> None:
        early, self._early_answer = self._early_answer, None
        if early is None:
            await self.session.send_raw(data)
        elif data != early:  # one answer per request all the same: the client already has the early one
            logger.error("the early answer to %s differs from the handler's: %r != %r", req.method, early, data)
