"""One client connection of the exec-server, independent of the transport (websocket, stdio, Noise).

The edge feeds complete messages to ``handle`` and writes what ``send`` receives; ``handle`` returns
False when Codex would drop the connection (an unknown notification, a response to an id the server
never issued). Requests run on ``concurrent_requests`` workers in arrival order (Codex's
``--concurrent-requests``, default 1); lifecycle messages wait for earlier requests to finish, so their
effects stay in order. Checks, as observed on Codex 0.169.0: unknown method → -32601, then params are
validated (-32602), then ``initialize`` and ``initialized`` are required (-32600 with a per-family
message), then the handler runs. ``close`` cancels running requests and detaches the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from exec_client.wire.protocol import InitializeParams, Method
from exec_server.handlers import METHODS, ThenRun
from exec_server.info import environment_info
from exec_server.params import parse_params
from exec_server.session import Session, SessionRegistry
from pycodex.jsonrpc import (
    ErrorReceived,
    NotificationReceived,
    RequestReceived,
    ResponseReceived,
    RpcPeer,
    Violation,
)
from pycodex.jsonrpc.errors import InternalError, InvalidRequest, MethodNotFound, RpcError

__all__ = ["Connection"]

log = logging.getLogger(__name__)

#: ``process/read`` long-polls waiting at once per connection; beyond this they wait in line.
MAX_PARALLEL_POLLS = 32

Send = Callable[[bytes], Awaitable[None]]


class Connection:
    def __init__(
        self,
        registry: SessionRegistry,
        send: Send,
        *,
        transport: str,
        parse_error_prefix: str,
        concurrent_requests: int = 1,
    ) -> None:
        self._registry = registry
        self._send = send
        self._transport = transport
        self._parse_error_prefix = parse_error_prefix
        self._peer = RpcPeer(include_jsonrpc=False)
        self._session: Session | None = None
        self._initialized = False
        self._token = object()
        # Requests run on ``concurrent_requests`` workers fed in arrival order, so the reader keeps
        # reading (and notices a closed socket) while a long-poll ``process/read`` waits.
        self._queue: asyncio.Queue[RequestReceived] = asyncio.Queue(maxsize=64)
        self._polls: set[asyncio.Task[None]] = set()
        self._workers = [
            asyncio.create_task(self._work(), name="exec-server-request-worker")
            for _ in range(max(1, concurrent_requests))
        ]

    @property
    def session(self) -> Session | None:
        return self._session

    async def handle(self, raw: bytes | str) -> bool:
        msg = self._peer.receive(raw)
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
            if msg.method == Method.INITIALIZED and self._session is not None:
                self._initialized = True
                return True
            log.info("dropping %s connection: unexpected notification %s", self._transport, msg.method)
            return False
        assert isinstance(msg, ResponseReceived | ErrorReceived)
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
            result = await self._dispatch(msg.method, msg.params)
        except RpcError as exc:
            await self._send(self._peer.respond_error(msg.id, exc))
            return
        except Exception as exc:
            log.exception("internal error in %s", msg.method)
            await self._send(self._peer.respond_error(msg.id, InternalError(str(exc))))
            return
        if isinstance(result, ThenRun):
            await self._send(self._peer.respond(msg.id, result.result))
            if self._session is not None:
                self._session.run_in_background(result.after())
            return
        await self._send(self._peer.respond(msg.id, result))

    async def _dispatch(self, method: str, params: Any) -> dict[str, Any] | ThenRun:
        if method == Method.INITIALIZE:
            return self._initialize(parse_params(InitializeParams, params))
        spec = METHODS.get(method)
        if spec is None:
            log.info("unimplemented method %s", method)
            raise MethodNotFound(f"exec-server stub does not implement `{method}` yet")
        if params is None and not any(f.is_required() for f in spec.model.model_fields.values()):
            params = {}
        parsed = parse_params(spec.model, params)
        if self._session is None:
            raise InvalidRequest(f"client must call initialize before using {spec.family} methods")
        if not self._initialized:
            raise InvalidRequest(f"client must send initialized before using {spec.family} methods")
        return await spec.handler(self._session, parsed)

    def _initialize(self, params: InitializeParams) -> dict[str, Any]:
        if self._session is not None:
            raise InvalidRequest("initialize may only be sent once per connection")
        self._session = self._registry.attach(
            params.resume_session_id, self._notify, self._token, send_encoded=self._send
        )
        return {"sessionId": self._session.id, "environmentInfo": environment_info()}

    async def _notify(self, method: str, params: dict[str, Any]) -> None:
        await self._send(self._peer.notify(method, params))

    async def close(self) -> None:
        """The transport ended: stop in-flight work and detach the session (it stays resumable)."""
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
