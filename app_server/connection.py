"""One client connection of the app-server: its session state, inbound queue and outbound requests.

``AppConnection`` is what a transport drives (see :mod:`pycodex.transport`). It feeds raw messages to
the sans-IO peer, answers wire violations the way Codex does (no reply, one stderr line), queues
requests for a single dispatcher task (so responses and the notifications handlers emit stay in arrival
order), and refuses requests with -32001 once the inbound queue is full.

``Session`` (the view handlers get) lives in :mod:`app_server.session`; it is re-exported here for the
callers that name it with the connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from app_server.errors import error_wire
from app_server.router import Router
from app_server.session import ConnectionClosedError, Deferred, ServerRequestTimeout, Session
from pycodex import otel
from pycodex.jsonrpc import (
    ErrorReceived,
    NotificationReceived,
    RequestReceived,
    ResponseReceived,
    RpcError,
    Violation,
)
from pycodex.jsonrpc.errors import InternalError, InvalidRequest
from pycodex.jsonrpc.router import shown_method
from pycodex.trace import recorder as trace
from pycodex.transport.base import Outbox
from pycodex.transport.endpoint import Endpoint

if TYPE_CHECKING:
    from pycodex.otel.sdk import Telemetry

__all__ = ["AppConnection", "ConnectionClosedError", "Deferred", "ServerRequestTimeout", "Session"]

logger = logging.getLogger(__name__)

DEFAULT_MAX_QUEUED_REQUESTS = 256


class AppConnection:
    """Transport-facing handler for one connection (implements ``MessageHandler``)."""

    def __init__(
        self,
        outbox: Outbox,
        router: Router,
        *,
        max_queued_requests: int = DEFAULT_MAX_QUEUED_REQUESTS,
        experimental_notifications: Iterable[str] = (),
        on_initialized: Callable[[], None] | None = None,
        early_answer: bytes | None = None,
        telemetry: Telemetry | None = None,
    ) -> None:
        send, offer = outbox.send, outbox.offer
        if trace.active_tracer() is not None:  # record what goes out; no cost when no trace is written

            async def send(data: bytes) -> None:
                trace.record("out", "client", self.session.id, data)
                await outbox.send(data)

            def offer(data: bytes) -> bool:
                if not outbox.offer(data):
                    return False  # not sent yet: recorded by the send that follows
                trace.record("out", "client", self.session.id, data)
                return True

        # error_wire: every error this connection answers with carries its code in `error.data`.
        self._endpoint = Endpoint(send, max_queued_requests=max_queued_requests, closed_error=ConnectionClosedError,
                                  error_wire=error_wire)
        self._peer = self._endpoint.peer
        self._router = router
        self.session = Session(self._endpoint, experimental_notifications=experimental_notifications,
                               offer=offer)
        self._queue = self._endpoint.requests
        self._on_initialized = on_initialized
        #: The stdio fast path already wrote this answer to the initialize that comes first (app_server/
        #: startup.py): that request is replayed to set up the session, and its answer held back.
        self._early_answer = early_answer
        self._deferred: set[asyncio.Task[None]] = set()
        self._telemetry = telemetry  # OpenTelemetry (pycodex.otel): None unless [otel] or OTEL_* set it up
        self._dispatcher = asyncio.get_running_loop().create_task(self._dispatch_loop(), name="dispatch")

    async def on_message(self, raw: bytes) -> None:
        """Classify one inbound message: queue a request, wake a server request's caller, or log."""
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
                # A newer client's notification: ignored, as Codex does.
                logger.debug("ignoring client notification %s", shown_method(msg.method))
            elif self._on_initialized is not None:
                self._on_initialized()
        elif isinstance(msg, Violation):
            # The reason only, never the line itself: a malformed line may still carry a key or token.
            logger.error("Failed to deserialize JSONRPCMessage: %s (%d bytes)", msg.reason, len(raw))

    async def on_line_too_long(self, size: int) -> None:
        """A line over the transport's limit: logged as Codex does, not answered."""
        logger.error("Failed to deserialize JSONRPCMessage: line of %d bytes exceeds the limit", size)

    async def on_close(self) -> None:
        """The client is gone (EOF): answer what was queued, then end the session."""
        session = self.session
        # Requests that arrived before EOF still get their one response (stdout is still open on stdio):
        # wait until the dispatcher has answered every queued request, however long that work takes under
        # load. The wait is bounded by the work itself: every handler finishes or fails (a server request it
        # makes has its own deadline), and nothing joins the queue after EOF. A Deferred answer (a running
        # command/exec) is not waited for: the close callbacks below end its process.
        drained = asyncio.ensure_future(self._queue.join())
        # A dispatcher that is gone (cancelled with its loop) would never drain the queue: stop waiting then.
        await asyncio.wait({drained, self._dispatcher}, return_when=asyncio.FIRST_COMPLETED)
        drained.cancel()
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
            try:
                with otel.request(self._telemetry, req.method, req.id, req.trace, self._queue.qsize()):
                    await self._dispatch_one(req)
            except Exception:  # one broken request must not end the connection's dispatcher
                logger.exception("dispatch of %s failed", req.method)
            finally:
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
