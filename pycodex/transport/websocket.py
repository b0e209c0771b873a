"""The WebSocket edge: one JSON-RPC message per text frame, plus ``/readyz`` and ``/healthz``.

Every connection is its own session with its own outbox, so a slow or vanished client only ever
blocks itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from http import HTTPStatus

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from pycodex.jsonrpc.framing import DEFAULT_MAX_LINE_BYTES
from pycodex.transport.base import ConnectionHandler, Outbox

__all__ = ["parse_ws_listen", "serve_websocket"]

logger = logging.getLogger(__name__)

_HEALTH_PATHS = frozenset({"/readyz", "/healthz"})


def parse_ws_listen(url: str) -> tuple[str, int]:
    """Split ``ws://IP:PORT`` into host and port, with a clear error for anything else."""
    if not url.startswith("ws://"):
        raise ValueError(f"expected ws://IP:PORT, got {url!r}")
    rest = url[len("ws://") :].rstrip("/")
    host, sep, port_text = rest.rpartition(":")
    if not sep or not host or not port_text.isdigit():
        raise ValueError(f"expected ws://IP:PORT, got {url!r}")
    port = int(port_text)
    if port > 65535:
        raise ValueError(f"port out of range in {url!r}")
    return host.strip("[]"), port


def _health(connection: ServerConnection, request: Request) -> Response | None:
    path = request.path.split("?", 1)[0]
    if path in _HEALTH_PATHS:
        return connection.respond(HTTPStatus.OK, "ok\n")
    return None


async def serve_websocket(
    make_handler: ConnectionHandler,
    host: str,
    port: int,
    *,
    max_message_bytes: int = DEFAULT_MAX_LINE_BYTES,
    on_listening: Callable[[Server], Awaitable[None] | None] | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """Accept connections until ``stop`` is set (or forever)."""

    async def handle(ws: ServerConnection) -> None:
        async def write(data: bytes) -> None:
            await ws.send(data.decode("utf-8"))

        outbox = Outbox(write)
        outbox.start()
        handler = make_handler(outbox)
        try:
            async for frame in ws:
                raw = frame.encode("utf-8") if isinstance(frame, str) else frame
                await handler.on_message(raw)
        except ConnectionClosed:
            pass
        finally:
            await handler.on_close()
            await outbox.close(flush_timeout=1.0)
            with contextlib.suppress(Exception):
                await ws.close()

    async with serve(
        handle,
        host,
        port,
        process_request=_health,
        max_size=max_message_bytes,
        max_queue=64,
        compression=None,
    ) as server:
        if on_listening is not None:
            result = on_listening(server)
            if result is not None:
                await result
        if stop is None:
            await asyncio.Future()
        else:
            await stop.wait()
