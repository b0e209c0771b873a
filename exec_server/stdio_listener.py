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
from pycodex.transport.stdio import StreamTransport

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
    """Serve one connection over stdin/stdout until stdin closes; returns the exit status (0)."""
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
    transport = StreamTransport.over_streams(reader, writer, max_line_bytes=MAX_LINE_BYTES)
    conn = Connection(
        registry,
        transport.send,
        transport="stdio",
        parse_error_prefix="failed to parse JSON-RPC message from exec-server stdio",
        concurrent_requests=concurrent_requests,
    )
    try:
        await conn.serve(transport)
    except ConnectionError:
        pass  # stdout is gone: nobody is listening any more
    finally:
        await conn.close()
        await registry.shutdown()
        writer.close()
    return 0
