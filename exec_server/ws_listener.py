"""The websocket listener (``--listen ws://IP:PORT``): upgrade checks, then one Connection per socket.

As in Codex 0.169.0: ``GET /readyz`` → 200; only ``/`` upgrades (other paths 404, plain HTTP 400);
any ``Origin`` header → 403 (browsers must not reach an executor); with capability-token auth a
missing or wrong ``Authorization: Bearer`` → 401. One JSON-RPC message per text frame; no
compression, no subprotocol. ``send`` awaits the socket's drain, which is what throttles output pumps.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from http import HTTPStatus

from websockets.asyncio.server import Server, ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from exec_server.connection import Connection
from exec_server.router import ExecRouter
from exec_server.session import SessionRegistry
from pycodex.transport.websocket import WebSocketTransport, listen_websocket
from pycodex.transport.ws_auth import capability_token_matches, has_origin

__all__ = ["WsOptions", "start_ws_server"]

WRITE_HIGH_WATER = 1 << 20

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class WsOptions:
    """Where and how the websocket listener serves: address, auth, request concurrency."""

    host: str
    port: int
    #: SHA-256 digest of the capability token; None disables auth.
    token_sha256: bytes | None = None
    concurrent_requests: int = 1


def _check_request(options: WsOptions, conn: ServerConnection, request: Request) -> Response | None:
    path = request.path.split("?", 1)[0]
    upgrade = "websocket" in request.headers.get("Upgrade", "").lower()
    if path == "/readyz" and not upgrade:
        return conn.respond(HTTPStatus.OK, "")
    if path != "/":
        return conn.respond(HTTPStatus.NOT_FOUND, "")
    if not upgrade:
        return conn.respond(HTTPStatus.BAD_REQUEST, "expected a websocket upgrade request\n")
    if has_origin(request.headers):
        return conn.respond(HTTPStatus.FORBIDDEN, "")
    if options.token_sha256 is not None:
        auth = request.headers.get("Authorization", "")
        scheme, _, token = auth.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return conn.respond(HTTPStatus.UNAUTHORIZED, "missing websocket bearer token")
        if not capability_token_matches(options.token_sha256, token.strip()):
            return conn.respond(HTTPStatus.UNAUTHORIZED, "invalid websocket bearer token")
    return None


async def start_ws_server(options: WsOptions, registry: SessionRegistry) -> Server:
    """Start the websocket listener; each upgrade that passes the gate becomes a connection."""
    router = ExecRouter()

    async def handler(ws: ServerConnection) -> None:
        host, port = ws.remote_address[:2]
        label = f"{host}:{port}"

        edge = WebSocketTransport(ws)
        conn = Connection(
            registry,
            edge.send,
            transport="websocket",
            parse_error_prefix=f"failed to parse websocket JSON-RPC message from exec-server websocket {label}",
            concurrent_requests=options.concurrent_requests,
            router=router,
            send_many=edge.send_many,
        )
        try:
            if not await conn.serve(edge):
                ws.transport.abort()  # Codex drops the TCP connection without a close frame
        except (ConnectionClosed, ConnectionError):
            pass
        finally:
            await conn.close()

    def process_request(conn: ServerConnection, request: Request) -> Response | None:
        return _check_request(options, conn, request)

    return await listen_websocket(
        handler,
        options.host,
        options.port,
        gate=process_request,
        max_message_bytes=MAX_MESSAGE_BYTES,
        server_header=None,
        # A deeper write buffer keeps the socket full while the client parses: output streams in 8 KiB
        # chunks, and the default 32 KiB high-water mark made every few chunks wait for a round trip.
        write_limit=WRITE_HIGH_WATER,
        ping_interval=30,
        ping_timeout=60,
    )
