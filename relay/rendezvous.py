"""The development rendezvous: a websocket relay routing relay frames by stream id (exec_server.md §6).

Development tool, not a production control plane. One executor websocket per environment
(``/relay/{environment_id}?role=environment&ticket=…``) multiplexes many streams; each harness
websocket (``…?role=harness&ticket=…``) carries one stream, claimed by its first frame (``Resume``).
Frames are forwarded byte for byte and never decrypted; the relay parses only what routing needs
(a stream id) and leaves the frame validation rules to the executor. The rendezvous sends ``Reset`` to the executor
when a harness goes away (otherwise the old stream stays attached and a resume is refused), and to
every harness of an environment whose executor goes away. Websocket messages over 256 KiB close the
connection (1009), as on Codex's relay endpoints; pings are answered and sent every 30 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass
from http import HTTPStatus
from typing import Protocol
from urllib.parse import parse_qs, unquote, urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from exec_client.wire.relay_frames import (
    RelayFrameDecodeError,
    RelayMessageFrame,
    RelayReset,
    RelayResume,
    decode_frame,
    encode_frame,
    validate_frame,
)
from relay.capture import FrameCapture

__all__ = [
    "MAX_FRAME_BYTES",
    "RESET_ENVIRONMENT_GONE",
    "RESET_ENVIRONMENT_UNAVAILABLE",
    "RESET_HARNESS_GONE",
    "RESET_STREAM_IN_USE",
    "Rendezvous",
    "TicketAuthority",
]

log = logging.getLogger(__name__)

#: Largest websocket message on either endpoint (exec_server.md §2).
MAX_FRAME_BYTES = 256 * 1024
RESET_HARNESS_GONE = "harness_disconnected"
RESET_ENVIRONMENT_GONE = "environment_disconnected"
RESET_ENVIRONMENT_UNAVAILABLE = "environment_unavailable"
RESET_STREAM_IN_USE = "stream_id_in_use"
_SEND_TIMEOUT_S = 30.0
_FIRST_FRAME_TIMEOUT_S = 30.0
_CLOSE_TIMEOUT_S = 2.0
_TO_HARNESS = "environment->harness"
_TO_ENVIRONMENT = "harness->environment"


class TicketAuthority(Protocol):
    """The registry side the rendezvous asks before accepting a websocket."""

    def check_environment_ticket(self, environment_id: str, ticket: str) -> bool:
        """True if ``ticket`` admits the environment's executor websocket."""
        ...

    def claim_harness_ticket(self, environment_id: str, ticket: str) -> bool:
        """True if ``ticket`` admits one harness websocket; a ticket admits one dial only."""
        ...


@dataclass(frozen=True)
class _Route:
    environment_id: str
    role: str
    ticket: str


def _parse_route(path: str) -> _Route | None:
    split = urlsplit(path)
    if not split.path.startswith("/relay/"):
        return None
    environment_id = unquote(split.path[len("/relay/") :])
    query = parse_qs(split.query)
    role = query.get("role", [""])[0]
    ticket = query.get("ticket", [""])[0]
    if not environment_id or role not in ("environment", "harness"):
        return None
    return _Route(environment_id, role, ticket)


class Rendezvous:
    """Routing state and the websocket handlers; :meth:`start` binds the server."""

    def __init__(self, authority: TicketAuthority, capture: FrameCapture | None = None) -> None:
        self._authority = authority
        self._capture = capture
        self._executors: dict[str, ServerConnection] = {}
        self._streams: dict[tuple[str, str], ServerConnection] = {}
        self._closing: set[asyncio.Task[None]] = set()
        #: Why frames were dropped instead of forwarded (for tests and debugging).
        self.dropped: Counter[str] = Counter()

    async def start(self, host: str, port: int) -> Server:
        """Listen for executor and harness websockets on ``host:port``."""
        return await serve(
            self._handle,
            host,
            port,
            process_request=self._process_request,
            max_size=MAX_FRAME_BYTES,
            compression=None,
            server_header=None,
            ping_interval=30,
            ping_timeout=60,
            close_timeout=_CLOSE_TIMEOUT_S,
        )

    def executor_connected(self, environment_id: str) -> bool:
        """True while the environment's executor websocket is open."""
        return environment_id in self._executors

    def stream_count(self, environment_id: str) -> int:
        """How many harness streams of the environment are open."""
        return sum(1 for env, _ in self._streams if env == environment_id)

    def drop_environment(self, environment_id: str) -> bool:
        """Cut the executor's websocket without a close frame (a network loss, for reconnect drills)."""
        ws = self._executors.get(environment_id)
        if ws is None:
            return False
        ws.transport.abort()
        return True

    # -- admission ----------------------------------------------------------------------------------

    def _process_request(self, conn: ServerConnection, request: Request) -> Response | None:
        route = _parse_route(request.path)
        if route is None:
            return conn.respond(HTTPStatus.NOT_FOUND, "expected /relay/{environment_id}?role=…&ticket=…\n")
        if route.role == "environment":
            allowed = self._authority.check_environment_ticket(route.environment_id, route.ticket)
        else:
            allowed = self._authority.claim_harness_ticket(route.environment_id, route.ticket)
        if not allowed:
            return conn.respond(HTTPStatus.FORBIDDEN, "unknown or expired rendezvous ticket\n")
        return None

    async def _handle(self, ws: ServerConnection) -> None:
        route = _parse_route(ws.request.path if ws.request else "")
        if route is None:  # admission already checked this; keep the type checker honest
            return
        if route.role == "environment":
            await self._serve_environment(ws, route.environment_id)
        else:
            await self._serve_harness(ws, route.environment_id)

    # -- executor side ------------------------------------------------------------------------------

    async def _serve_environment(self, ws: ServerConnection, env: str) -> None:
        old = self._executors.get(env)
        self._executors[env] = ws
        self._event("environment_connected", env)
        if old is not None:
            # The old connection's streams died with it; a half-open socket will not answer a close.
            await self._reset_harnesses(env)
            old.transport.abort()
        try:
            async for message, frame in self._frames(ws):
                key = (env, frame.stream_id)
                harness = self._streams.get(key)
                if harness is None:
                    self.dropped["no_harness"] += 1
                    continue
                if self._capture:
                    self._capture.frame(_TO_HARNESS, env, message)
                if isinstance(frame.body, RelayReset):
                    del self._streams[key]  # the stream is over; no Reset back when the harness leaves
                    await self._send(harness, message)
                    self._close_later(harness, "stream reset by the environment")
                else:
                    await self._send(harness, message)
        except ConnectionClosed:
            pass
        finally:
            if self._executors.get(env) is ws:
                del self._executors[env]
                await self._reset_harnesses(env)
            self._event("environment_disconnected", env)

    async def _reset_harnesses(self, env: str) -> None:
        harnesses = [(key[1], self._streams.pop(key)) for key in [k for k in self._streams if k[0] == env]]
        await asyncio.gather(*(self._send(ws, _reset(sid, RESET_ENVIRONMENT_GONE)) for sid, ws in harnesses))
        for _, ws in harnesses:
            self._close_later(ws, "environment disconnected")

    # -- harness side -------------------------------------------------------------------------------

    async def _serve_harness(self, ws: ServerConnection, env: str) -> None:
        key = await self._claim_stream(ws, env)
        if key is None:
            await ws.close(1008, "the first frame must be Resume for a free stream id")
            return
        self._event("harness_connected", env, stream_id=key[1])
        try:
            async for message, frame in self._frames(ws):
                if frame.stream_id != key[1] or self._streams.get(key) is not ws:
                    self.dropped["foreign_stream"] += 1
                    continue
                executor = self._executors.get(env)
                if executor is None:
                    del self._streams[key]
                    await self._send(ws, _reset(key[1], RESET_ENVIRONMENT_UNAVAILABLE))
                    break
                if self._capture:
                    self._capture.frame(_TO_ENVIRONMENT, env, message)
                if isinstance(frame.body, RelayReset):
                    del self._streams[key]
                await self._send(executor, message)
        except ConnectionClosed:
            pass
        finally:
            if self._streams.get(key) is ws:
                del self._streams[key]
                executor = self._executors.get(env)
                if executor is not None:
                    reset = _reset(key[1], RESET_HARNESS_GONE)
                    if self._capture:
                        self._capture.frame(_TO_ENVIRONMENT, env, reset)
                    await self._send(executor, reset)
            self._event("harness_disconnected", env, stream_id=key[1])
            await ws.close()

    async def _claim_stream(self, ws: ServerConnection, env: str) -> tuple[str, str] | None:
        try:
            first = await asyncio.wait_for(ws.recv(), _FIRST_FRAME_TIMEOUT_S)
        except (TimeoutError, ConnectionClosed):
            return None
        frame = self._decode(first) if isinstance(first, bytes) else None
        if frame is not None:
            try:
                validate_frame(frame)  # the claim itself must be a well-formed Resume
            except RelayFrameDecodeError:
                frame = None
        if frame is None or not isinstance(frame.body, RelayResume):
            self.dropped["harness_without_resume"] += 1
            return None
        assert isinstance(first, bytes)
        key = (env, frame.stream_id)
        if key in self._streams:
            await self._send(ws, _reset(frame.stream_id, RESET_STREAM_IN_USE))
            return None
        executor = self._executors.get(env)
        if executor is None:
            await self._send(ws, _reset(frame.stream_id, RESET_ENVIRONMENT_UNAVAILABLE))
            return None
        self._streams[key] = ws
        if self._capture:
            self._capture.frame(_TO_ENVIRONMENT, env, first)
        await self._send(executor, first)
        return key

    # -- helpers ------------------------------------------------------------------------------------

    async def _frames(self, ws: ServerConnection) -> AsyncIterator[tuple[bytes, RelayMessageFrame]]:
        """The routable binary frames of a connection; text frames and undecodable ones are counted."""
        async for message in ws:
            if isinstance(message, str):
                self.dropped["text_frame"] += 1
                continue
            frame = self._decode(message)
            if frame is not None:
                yield message, frame

    def _decode(self, data: bytes) -> RelayMessageFrame | None:
        """Parse just enough to route; the executor applies the full validation rules, as with Codex."""
        try:
            frame = decode_frame(data, validate=False)
        except RelayFrameDecodeError as exc:
            self.dropped[exc.reason.value] += 1
            return None
        if not frame.stream_id:
            self.dropped["missing_stream_id"] += 1
            return None
        return frame

    async def _send(self, ws: ServerConnection, data: bytes) -> None:
        """Forward one message; a peer that is gone or stalled for 30 s loses its connection."""
        try:
            async with asyncio.timeout(_SEND_TIMEOUT_S):  # a timer per frame, not a task as wait_for
                await ws.send(data)
        except ConnectionClosed:
            self.dropped["peer_closed"] += 1
        except TimeoutError:
            self.dropped["peer_stalled"] += 1
            with contextlib.suppress(Exception):
                ws.transport.abort()

    def _close_later(self, ws: ServerConnection, reason: str) -> None:
        """Close without stalling the caller's routing loop on a slow close handshake."""
        task = asyncio.create_task(ws.close(1000, reason))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    def _event(self, event: str, env: str, **details: str) -> None:
        log.info("%s %s %s", event, env, " ".join(f"{k}={v}" for k, v in details.items()))
        if self._capture:
            self._capture.event(event, env, **details)


def _reset(stream_id: str, reason: str) -> bytes:
    return encode_frame(RelayMessageFrame(stream_id, RelayReset(reason)))
