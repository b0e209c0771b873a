"""One client connection of the exec-server, independent of the transport (websocket, stdio, Noise).

The edge feeds complete messages to ``handle`` and writes what ``send`` receives; ``handle`` returns
False when the connection must be dropped (``initialized`` before ``initialize``, a response to an id the
server never issued); an unknown notification is ignored and logged at debug (Codex drops the connection
for it, which cuts a newer client off). Requests run on ``concurrent_requests`` workers in arrival order (Codex's
``--concurrent-requests``, default 1); lifecycle messages wait for earlier requests to finish, so their
effects stay in order. What a request gets is the router's business (:mod:`exec_server.router`); the
connection owns the handshake state its gate reads. ``close`` cancels running requests and detaches
the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence

from exec_client.wire.protocol import InitializeParams, Method
from exec_server.handlers import ThenRun
from exec_server.info import environment_info
from exec_server.router import ExecRouter
from exec_server.session import Session, SessionRegistry
from pycodex.json_types import JsonObj
from pycodex.jsonrpc import NotificationReceived, RequestReceived, Violation
from pycodex.jsonrpc.errors import InternalError, InvalidRequest, RpcError
from pycodex.jsonrpc.router import shown_method
from pycodex.transport.base import Transport
from pycodex.transport.endpoint import Endpoint

__all__ = ["Connection"]

log = logging.getLogger(__name__)

#: ``process/read`` long-polls waiting at once per connection; beyond this they wait in line.
MAX_PARALLEL_POLLS = 32

Send = Callable[[bytes], Awaitable[None]]
#: Send several messages at once (the edge may join them into one socket write).
SendMany = Callable[[Sequence[bytes]], Awaitable[None]]


class Connection:
    """One client connection: its JSON-RPC endpoint, request workers and attached session.

    The router (shared by all connections) decides what a request gets; the connection decides when it runs
    and owns the handshake state the router's gate reads (it satisfies
    :class:`exec_server.contracts.Handshake`).
    """

    def __init__(
        self,
        registry: SessionRegistry,
        send: Send,
        *,
        transport: str,
        parse_error_prefix: str,
        concurrent_requests: int = 1,
        router: ExecRouter | None = None,
        send_many: SendMany | None = None,
    ) -> None:
        self._registry = registry
        self._router = router or ExecRouter()
        self._send = send
        self._send_many = send_many or self._send_each
        self._transport = transport
        self._parse_error_prefix = parse_error_prefix
        # Writes go straight to the edge, not through an Outbox: awaiting the socket is what throttles
        # the output pumps (and so the children's pipes), and a failed write must raise ConnectionError.
        self._endpoint = Endpoint(send, max_queued_requests=64)
        self._peer = self._endpoint.peer
        self._session: Session | None = None
        self._initialized = False
        self._token = object()
        # Requests run on ``concurrent_requests`` workers fed in arrival order, so the reader keeps
        # reading (and notices a closed socket) while a long-poll ``process/read`` waits.
        self._queue = self._endpoint.requests
        self._polls: set[asyncio.Task[None]] = set()
        self._workers = [
            asyncio.create_task(self._work(), name="exec-server-request-worker")
            for _ in range(max(1, concurrent_requests))
        ]

    @property
    def session(self) -> Session | None:
        """The session ``initialize`` attached, or None before it succeeded."""
        return self._session

    async def handle(self, raw: bytes | str) -> bool:
        """Take one complete message from the edge; False means Codex would drop the connection now."""
        msg = self._endpoint.receive(raw)
        if msg is None:
            return True
        if isinstance(msg, Violation):
            await self._parse_error(_codex_reason(msg.reason))
            return True
        if isinstance(msg, RequestReceived):
            log.debug("request %s", msg.method)
            if isinstance(msg.id, bool) or not isinstance(msg.id, int | str):
                self._peer.respond_error(msg.id, InvalidRequest("bad id"))  # untrack it
                await self._parse_error("data did not match any variant of untagged enum RequestId")
                return True
            if msg.method == Method.INITIALIZE:
                # Lifecycle steps take effect in order: earlier requests finish first.
                await self._queue.join()
                await self._serve(msg)
            else:
                await self._queue.put(msg)
            return True
        if isinstance(msg, NotificationReceived):
            await self._queue.join()
            if msg.method == Method.INITIALIZED:
                if self._session is None:
                    log.info("dropping %s connection: initialized before initialize", self._transport)
                    return False
                self._initialized = True
                return True
            # A newer client's notification: ignored. Codex drops the connection, which cuts such a client off.
            log.debug("ignoring %s notification %s", self._transport, shown_method(msg.method))
            return True
        # The exec-server never sends requests, so every response is to an id it never issued.
        log.info("dropping %s connection: response to an id never issued", self._transport)
        return False

    async def _parse_error(self, reason: str) -> None:
        text = f"{self._parse_error_prefix}: {reason}"
        await self._send(self._peer.error_untracked(-1, InvalidRequest(text)))

    async def _work(self) -> None:
        while True:
            msg = await self._queue.get()
            try:
                if msg.method == Method.PROCESS_READ and len(self._polls) < MAX_PARALLEL_POLLS:
                    # Everything before it has been served, so order holds; its wait (up to
                    # ``waitMs``) then runs beside later requests instead of in front of them.
                    poll = asyncio.create_task(self._serve_guarded(msg), name="exec-server-process-read")
                    self._polls.add(poll)
                    poll.add_done_callback(self._polls.discard)
                else:
                    await self._serve_guarded(msg)
            finally:
                self._queue.task_done()

    async def _serve_guarded(self, msg: RequestReceived) -> None:
        try:
            await self._serve(msg)
        except ConnectionError:
            pass  # the transport is gone; close() will stop this work
        except Exception:  # a bug must not silently stop this connection's request processing
            log.exception("failed to answer %s", msg.method)
            if self._peer.is_in_flight(msg.id):
                with contextlib.suppress(Exception):
                    await self._send(self._peer.respond_error(msg.id, InternalError("internal error")))

    async def _serve(self, msg: RequestReceived) -> None:
        try:
            result = await self._router.dispatch(self, msg.method, msg.params, msg.has_params)
        except RpcError as exc:
            await self._send(self._peer.respond_error(msg.id, exc))
            return
        if isinstance(result, ThenRun):
            await self._send(self._peer.respond(msg.id, result.result))
            if self._session is not None:
                self._session.run_in_background(result.after())
            return
        await self._send(self._peer.respond(msg.id, result))

    @property
    def initialized(self) -> bool:
        """``initialized`` was received after a successful ``initialize``."""
        return self._initialized

    def initialize(self, params: InitializeParams) -> JsonObj:
        """Attach a new session, or resume ``resumeSessionId``; allowed once per connection."""
        if self._session is not None:
            raise InvalidRequest("initialize may only be sent once per connection")
        self._session = self._registry.attach(
            params.resume_session_id, self._notify, self._token, send_encoded=self._send_many
        )
        return {"sessionId": self._session.id, "environmentInfo": environment_info()}

    async def _send_each(self, messages: Sequence[bytes]) -> None:
        for message in messages:
            await self._send(message)

    async def _notify(self, method: str, params: JsonObj) -> None:
        await self._send(self._peer.notify(method, params))

    async def serve(self, transport: Transport) -> bool:
        """Feed ``transport`` to ``handle`` until it ends (True) or Codex would drop the peer (False)."""
        while (message := await transport.recv()) is not None:
            if not await self.handle(message):
                return False
        return True

    async def close(self) -> None:
        """The transport ended: stop in-flight work and detach the session (it stays resumable)."""
        self._endpoint.close("connection closed")
        tasks = [*self._workers, *self._polls]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._session is not None:
            self._registry.detach(self._session, self._token)


def _codex_reason(reason: str) -> str:
    if reason.startswith(("batches", "expected a JSON object")):
        return "expected a JSON-RPC object"
    return reason
