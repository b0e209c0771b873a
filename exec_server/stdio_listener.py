"""The stdio transport (``--listen stdio``): newline-delimited JSON on stdin/stdout.

One connection for the life of the process; when stdin closes the session ends, its process groups
are killed and the server exits 0 (as Codex does).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from typing import BinaryIO

from exec_server.connection import Connection
from exec_server.session import SessionRegistry
from pycodex.jsonrpc import LineBuffer, OverlongLine

__all__ = ["serve_stdio"]

log = logging.getLogger(__name__)

MAX_LINE_BYTES = 64 * 1024 * 1024 + 1024


async def serve_stdio(
    registry: SessionRegistry,
    *,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
    concurrent_requests: int = 1,
) -> int:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**20)
    in_file = stdin or sys.stdin.buffer
    out_file = stdout or sys.stdout.buffer
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), in_file)
    # A dup'd, separate write file keeps stdout blocking-safe for anything else that prints.
    w_transport, w_protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(os.dup(out_file.fileno()), "wb")
    )
    writer = asyncio.StreamWriter(w_transport, w_protocol, None, loop)
    lock = asyncio.Lock()

    async def send(data: bytes) -> None:
        async with lock:
            if writer.is_closing():
                raise ConnectionError("stdout is closed")
            writer.write(data + b"\n")
            await writer.drain()

    conn = Connection(
        registry,
        send,
        transport="stdio",
        parse_error_prefix="failed to parse JSON-RPC message from exec-server stdio",
        concurrent_requests=concurrent_requests,
    )
    lines = LineBuffer(MAX_LINE_BYTES)
    try:
        while True:
            data = await reader.read(65536)
            batch = lines.feed(data) if data else lines.feed_eof()
            for line in batch:
                if isinstance(line, OverlongLine):
                    log.warning("dropping an overlong stdin line of %d bytes", line.size)
                    continue
                if not line.strip():
                    continue
                if not await conn.handle(line):
                    return 0
            if not data:
                return 0
    except ConnectionError:
        return 0  # stdout is gone: nobody is listening any more
    finally:
        await conn.close()
        await registry.shutdown()
        writer.close()
