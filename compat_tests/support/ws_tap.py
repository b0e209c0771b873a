"""A transparent WebSocket forwarder between an app-server and an exec-server that keeps the JSON-RPC.

The direct WebSocket transport is plaintext, so the tap records every text message each way
(``>`` app-server to exec-server, ``<`` back) for the pair's failure report. It forwards frames as
they are (text stays text, binary stays binary) and closes both sides when either closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

__all__ = ["WsTap"]

_CONNECT_TIMEOUT = 30.0


class WsTap:
    def __init__(self) -> None:
        self.transcript: list[tuple[str, float, Any]] = []
        self._server: Server | None = None
        self._upstream = ""
        self._started = time.monotonic()

    async def start(self, upstream: str) -> str:
        """Listen on 127.0.0.1 and forward each connection to ``upstream``; the tap's URL."""
        self._upstream = upstream
        self._server = await serve(
            self._handle, "127.0.0.1", 0, compression=None, max_size=None, close_timeout=2
        )
        port = next(iter(self._server.sockets)).getsockname()[1]
        return f"ws://127.0.0.1:{port}"

    async def _handle(self, downstream: ServerConnection) -> None:
        async with connect(
            self._upstream, compression=None, max_size=None, open_timeout=_CONNECT_TIMEOUT, close_timeout=2
        ) as upstream:
            pumps = [
                asyncio.create_task(self._pump(downstream, upstream, ">")),
                asyncio.create_task(self._pump(upstream, downstream, "<")),
            ]
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
            for task in pumps:
                task.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)

    async def _pump(
        self,
        source: ServerConnection | ClientConnection,
        sink: ServerConnection | ClientConnection,
        direction: str,
    ) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for message in source:
                record: Any = message
                if isinstance(message, str):
                    with contextlib.suppress(json.JSONDecodeError):
                        record = json.loads(message)
                else:
                    record = {"binary_bytes": len(message)}
                self.transcript.append((direction, time.monotonic() - self._started, record))
                await sink.send(message)
        await sink.close()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), 10.0)

    def transcript_lines(self) -> list[str]:
        return [json.dumps({"dir": d, "t": round(t, 3), "msg": m}) for d, t, m in self.transcript]
