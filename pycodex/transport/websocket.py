"""The WebSocket edge: one JSON-RPC message per text frame, plus ``/readyz`` and ``/healthz``.

Requests carrying ``Origin`` are refused (403) and, with ``auth``, a bearer token is required (401);
see :mod:`pycodex.transport.ws_auth`.

Every connection is its own session with its own outbox, so a slow or vanished client only ever
blocks itself.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import struct
from collections.abc import Awaitable, Callable, Sequence
from http import HTTPStatus
from typing import TypedDict, Unpack

from websockets.asyncio.connection import Connection
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed, ProtocolError
from websockets.http11 import Request, Response
from websockets.protocol import SEND_EOF, Side

from pycodex.transport.base import ConnectionHandler, TransportClosed, serve_transport
from pycodex.transport.ws_auth import WsAuth, authorize, has_origin, header_safe_logger

__all__ = ["UpgradeGate", "WebSocketTransport", "listen_websocket", "parse_ws_listen", "serve_websocket"]

logger = logging.getLogger(__name__)

#: Decides on an upgrade request before it happens: a response refuses it (or answers a probe).
UpgradeGate = Callable[[ServerConnection, Request], Response | None]

_HEALTH_PATHS = frozenset({"/readyz", "/healthz"})
#: Codex refuses a larger inbound message by dropping the connection; websockets closes with 1009.
MAX_MESSAGE_BYTES = 16 * 1024 * 1024
#: FIN set and the opcode: the first byte of an unfragmented text or binary frame.
_TEXT, _BINARY = 0x81, 0x82
_HEADER_16 = struct.Struct("!BBH")
_HEADER_64 = struct.Struct("!BBQ")


class WebSocketTransport:
    """One JSON-RPC message per text frame over an open websocket (either side of it).

    ``binary`` says what to do with a binary frame: hand it on as the message (``"pass"``) or drop it
    with a warning (``"drop"``, as Codex's app-server does).
    """

    def __init__(self, ws: Connection, *, binary: str = "pass") -> None:
        self._ws = ws
        self._drop_binary = binary == "drop"

    async def send(self, data: bytes) -> None:
        """Send one message as a text frame; raises ``TransportClosed`` once the socket is gone."""
        # A batch of one: on the server side its frame is built here, without websockets' Frame objects and
        # send path, which at hundreds of connections was most of a single notice's write.
        await self.send_many((data,))

    async def send_many(self, messages: Sequence[bytes], *, binary: bool = False) -> None:
        """Several messages, a text frame each (binary frames with ``binary``), handed to the socket in
        one write with one drain.

        For a burst (an output read split into chunk notifications) this saves, per message, a socket
        write, a send context and websockets' frame objects. On the server side without extensions
        (``listen_websocket`` turns compression off) a text frame is just a header and the payload, so
        the frames are built here and joined with the payloads in one copy; otherwise websockets frames
        them (masking on the client side) and only the write is joined.
        """
        ws = self._ws
        try:
            async with ws.send_context():
                protocol = ws.protocol
                if protocol.side is Side.SERVER and not protocol.extensions:
                    if protocol.expect_continuation_frame:  # as send_text: no frames inside a fragmented one
                        raise ProtocolError("expected a continuation frame")
                    # writelines: one joined write (3.11), a scatter-gather sendmsg without the join (3.12+)
                    ws.transport.writelines(_frames(messages, _BINARY if binary else _TEXT))
                    return
                send = protocol.send_binary if binary else protocol.send_text
                for message in messages:
                    send(message)
                frames = protocol.data_to_send()
                if SEND_EOF in frames:  # not produced by send_text; leave it to websockets' own writer
                    protocol.writes[:0] = frames
                else:
                    ws.transport.write(b"".join(frames))
        except ConnectionClosed as exc:
            raise TransportClosed(f"websocket closed: {exc}") from exc

    async def recv(self) -> bytes | None:
        """The next data frame's payload as UTF-8 bytes, or None when the socket closed."""
        while True:
            try:
                frame = await self._ws.recv()
            except ConnectionClosed:
                return None
            if isinstance(frame, str):
                return frame.encode("utf-8")
            if not self._drop_binary:
                return frame
            logger.warning("dropping unsupported binary websocket message")

    async def close(self) -> None:
        """Close the socket with the normal close handshake."""
        await self._ws.close()


def _frames(messages: Sequence[bytes], first_byte: int) -> list[bytes]:
    """Unmasked, final frames (RFC 6455 §5.2) of one opcode, as header and payload pieces to join."""
    pieces: list[bytes] = []
    for message in messages:
        size = len(message)
        if size < 126:
            pieces.append(bytes((first_byte, size)))
        elif size < 65536:
            pieces.append(_HEADER_16.pack(first_byte, 126, size))
        else:
            pieces.append(_HEADER_64.pack(first_byte, 127, size))
        pieces.append(message)
    return pieces


def parse_ws_listen(url: str) -> tuple[str, int]:
    """Split ``ws://IP:PORT`` into host and port; like Codex, a host name is not accepted (IPs only)."""
    invalid = f"invalid websocket --listen URL `{url}`; expected `ws://IP:PORT`"
    rest = url[len("ws://") :].rstrip("/")
    host, sep, port_text = rest.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise ValueError(invalid)  # a bare IPv6 address needs brackets
    if not sep or not port_text.isdigit() or int(port_text) > 65535:
        raise ValueError(invalid)
    try:
        ipaddress.ip_address(host)
    except ValueError:
        raise ValueError(invalid) from None
    return host, int(port_text)


def _wants_upgrade(request: Request) -> bool:
    tokens = {t.strip().lower() for v in request.headers.get_all("Connection") for t in v.split(",")}
    return "upgrade" in tokens


def _gate(auth: WsAuth) -> Callable[[ServerConnection, Request], Response | None]:
    """The checks before an upgrade, in Codex's order: Origin (every path), probes, upgrade, auth."""

    def check(connection: ServerConnection, request: Request) -> Response | None:
        if has_origin(request.headers):
            return connection.respond(HTTPStatus.FORBIDDEN, "")
        if request.path.split("?", 1)[0] in _HEALTH_PATHS:
            return connection.respond(HTTPStatus.OK, "")
        if not _wants_upgrade(request):
            return connection.respond(HTTPStatus.BAD_REQUEST, "Connection header did not include 'upgrade'")
        refusal = authorize(request.headers, auth)
        if refusal is not None:
            logger.info("refused a websocket upgrade: %s", refusal)
            return connection.respond(HTTPStatus.UNAUTHORIZED, refusal)
        return None

    return check


async def serve_websocket(
    make_handler: ConnectionHandler,
    host: str,
    port: int,
    *,
    auth: WsAuth = None,
    max_message_bytes: int = MAX_MESSAGE_BYTES,
    on_listening: Callable[[Server], Awaitable[None] | None] | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """Accept connections until ``stop`` is set (or forever)."""

    async def handle(ws: ServerConnection) -> None:
        await serve_transport(make_handler, WebSocketTransport(ws, binary="drop"), flush_timeout=1.0)

    listener = listen_websocket(
        handle, host, port, gate=_gate(auth), max_message_bytes=max_message_bytes, max_queue=64
    )
    async with await listener as server:
        if on_listening is not None:
            result = on_listening(server)
            if result is not None:
                await result
        if stop is None:
            await asyncio.Future()
        else:
            await stop.wait()


class ListenerOptions(TypedDict, total=False):
    """A server's own ``websockets`` settings that :func:`listen_websocket` passes to ``serve``."""

    server_header: str | None
    write_limit: int | tuple[int, int | None]
    ping_interval: float | None
    ping_timeout: float | None
    max_queue: int | tuple[int | None, int | None] | None


async def listen_websocket(
    on_connection: Callable[[ServerConnection], Awaitable[None]],
    host: str,
    port: int,
    *,
    gate: UpgradeGate,
    max_message_bytes: int,
    **options: Unpack[ListenerOptions],
) -> Server:
    """Start a listener: ``gate`` checks each upgrade, then ``on_connection`` serves the socket.

    Both servers listen through here: no compression, headers never logged, frames bounded. ``options``
    are the server's own ``websockets`` settings (keepalive, write buffer, queue depth).
    """
    return await serve(
        on_connection,
        host,
        port,
        process_request=gate,
        logger=header_safe_logger("websockets.server"),
        max_size=max_message_bytes,
        compression=None,
        **options,
    )
