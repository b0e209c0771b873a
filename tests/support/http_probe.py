"""Raw HTTP/1.1 probes of a WebSocket listener: the upgrade request and its status and body, nothing more.

A real WebSocket client hides refused upgrades behind exceptions and adds headers of its own (never
``Origin`` unless asked, but always its own ``User-Agent``); these probes send exactly what the test says.
"""

from __future__ import annotations

import asyncio
import base64
import os
from collections.abc import Callable, Sequence

__all__ = ["HttpAnswer", "http_exchange", "wait_ready"]


class HttpAnswer:
    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def __repr__(self) -> str:
        return f"HttpAnswer({self.status}, {self.body[:200]!r})"


async def http_exchange(
    port: int, path: str = "/", headers: Sequence[str] = (), *, upgrade: bool = True, timeout: float = 5.0
) -> HttpAnswer:
    """Send one GET (a WebSocket upgrade when ``upgrade``) to 127.0.0.1:port; return the answer's head and body."""
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), timeout)
    try:
        lines = [f"GET {path} HTTP/1.1", f"Host: 127.0.0.1:{port}"]
        if upgrade:
            key = base64.b64encode(os.urandom(16)).decode()
            lines += ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13",
                      f"Sec-WebSocket-Key: {key}"]
        lines += list(headers)
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        parsed = {}
        for line in header_lines:
            if ":" in line:
                name, _, value = line.partition(":")
                parsed[name.strip().lower()] = value.strip()
        body = b""
        length = int(parsed.get("content-length", "0"))
        if length:
            body = await asyncio.wait_for(reader.readexactly(length), timeout)
        return HttpAnswer(int(status_line.split()[1]), parsed, body)
    finally:
        writer.close()


async def wait_ready(port: int, *, timeout: float = 20.0, exited: Callable[[], bool] | None = None) -> None:
    """Poll ``/readyz`` until it answers 200 (bounded by ``timeout``; early out once ``exited()``)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        if exited is not None and exited():
            raise AssertionError(f"the server exited before listening on 127.0.0.1:{port}")
        try:
            if (await http_exchange(port, "/readyz", upgrade=False)).status == 200:
                return
        except (OSError, asyncio.IncompleteReadError):
            pass
        if loop.time() >= deadline:
            raise TimeoutError(f"nothing answered /readyz on 127.0.0.1:{port} within {timeout} s")
        await asyncio.sleep(0.05)
