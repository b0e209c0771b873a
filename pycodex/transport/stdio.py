"""The stdio edge: LF-delimited messages on stdin/stdout.

stdout carries protocol lines only and each message is flushed as it is written; logs go to stderr.
Pipes and ttys are read through the event loop; anything else (a regular file redirected to stdin) is
read in a worker thread so the loop never blocks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
import sys
from typing import BinaryIO

from pycodex.jsonrpc.framing import DEFAULT_MAX_LINE_BYTES, LineBuffer, OverlongLine
from pycodex.transport.base import ConnectionHandler, Outbox

__all__ = ["serve_stdio"]

logger = logging.getLogger(__name__)

_READ_CHUNK = 1 << 20


def _is_streamable(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


async def _open_reader(stdin: BinaryIO) -> asyncio.StreamReader | None:
    if not _is_streamable(stdin.fileno()):
        return None
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_READ_CHUNK * 2)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    return reader


async def _open_writer(stdout: BinaryIO) -> asyncio.StreamWriter | None:
    if not _is_streamable(stdout.fileno()):
        return None
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, stdout)
    return asyncio.StreamWriter(transport, protocol, None, loop)


async def serve_stdio(
    make_handler: ConnectionHandler,
    *,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> None:
    """Serve one connection on stdin/stdout until stdin reaches EOF."""
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    writer = await _open_writer(stdout)

    async def write(data: bytes) -> None:
        if writer is not None:
            writer.write(data + b"\n")
            await writer.drain()
        else:
            await asyncio.to_thread(_blocking_write, stdout, data)

    outbox = Outbox(write)
    outbox.start()
    handler = make_handler(outbox)
    reader = await _open_reader(stdin)
    framer = LineBuffer(max_line_bytes)
    try:
        while True:
            if reader is not None:
                chunk = await reader.read(_READ_CHUNK)
            else:
                chunk = await asyncio.to_thread(os.read, stdin.fileno(), _READ_CHUNK)
            lines = framer.feed(chunk) if chunk else framer.feed_eof()
            for line in lines:
                if isinstance(line, OverlongLine):
                    await handler.on_line_too_long(line.size)
                else:
                    await handler.on_message(line)
            if not chunk:
                logger.debug("stdin reached EOF")
                break
    finally:
        await handler.on_close()
        await outbox.close(flush_timeout=2.0)
        if writer is not None:
            with contextlib.suppress(Exception):
                writer.close()


def _blocking_write(stream: BinaryIO, data: bytes) -> None:
    stream.write(data + b"\n")
    stream.flush()
