"""The stdio edge: LF-delimited messages on stdin/stdout.

stdout carries protocol lines only and each message is flushed as it is written; logs go to stderr.
Pipes, sockets and ttys are read through the event loop; anything epoll cannot watch (a regular file or
``/dev/null`` redirected to stdin) is read in a worker thread so the loop never blocks.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import selectors
import stat
import sys
from typing import BinaryIO

from pycodex.jsonrpc.framing import DEFAULT_MAX_LINE_BYTES, LineBuffer, OverlongLine
from pycodex.transport.base import ConnectionHandler, Outbox, TransportClosed

__all__ = ["StreamTransport", "serve_stdio"]

logger = logging.getLogger(__name__)

_READ_CHUNK = 1 << 20


class StreamTransport:
    """LF-delimited messages over an asyncio stream pair (a child's stdout/stdin, a socket).

    The message-oriented ``Transport`` for the stdio wire: blank and overlong lines are skipped, an
    unterminated last line still counts.
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        read_chunk: int = 65536,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._lines = LineBuffer(max_line_bytes)
        self._ready: collections.deque[bytes] = collections.deque()
        self._chunk = read_chunk
        self._eof = False

    async def send(self, data: bytes) -> None:
        if self._writer.is_closing():
            raise TransportClosed("stream closed")
        try:
            self._writer.write(data + b"\n")
            await self._writer.drain()
        except (ConnectionError, RuntimeError) as exc:
            raise TransportClosed(f"stream closed: {exc}") from exc

    async def recv(self) -> bytes | None:
        while not self._ready:
            if self._eof:
                return None
            data = await self._reader.read(self._chunk)
            lines = self._lines.feed(data) if data else self._lines.feed_eof()
            self._eof = not data
            for line in lines:
                if isinstance(line, OverlongLine):
                    logger.warning("dropping an overlong line of %d bytes", line.size)
                elif line.strip():
                    self._ready.append(line)
        return self._ready.popleft()

    async def close(self) -> None:
        self._writer.close()
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()


def _is_streamable(fd: int) -> bool:
    """True if the event loop can watch ``fd``: a pipe, socket or a character device epoll accepts."""
    mode = os.fstat(fd).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return True
    if not stat.S_ISCHR(mode):
        return False
    # Some character devices (``/dev/null``) refuse epoll with EPERM: try on a throwaway selector.
    with selectors.DefaultSelector() as probe:
        try:
            probe.register(fd, selectors.EVENT_READ)
        except (OSError, ValueError):
            return False
    return True


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
    stop: asyncio.Event | None = None,
) -> None:
    """Serve one connection on stdin/stdout until stdin reaches EOF or ``stop`` is set.

    Either way the handler's ``on_close`` runs while stdout is still open, so requests already read
    get their responses.
    """
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
    stopped = asyncio.ensure_future((stop or asyncio.Event()).wait())
    try:
        while not stopped.done():
            if reader is not None:
                read: asyncio.Future[bytes] = asyncio.ensure_future(reader.read(_READ_CHUNK))
            else:
                read = asyncio.ensure_future(asyncio.to_thread(os.read, stdin.fileno(), _READ_CHUNK))
            await asyncio.wait((read, stopped), return_when=asyncio.FIRST_COMPLETED)
            if not read.done():
                read.cancel()  # a worker thread stuck in read() is left behind: the process is ending
                break
            chunk = read.result()
            lines = framer.feed(chunk) if chunk else framer.feed_eof()
            for line in lines:
                if isinstance(line, OverlongLine):
                    await handler.on_line_too_long(line.size)
                else:
                    await handler.on_message(line)
            if not chunk:
                logger.debug("stdin reached EOF")
                break
        else:
            logger.debug("stdio transport stopped")
    finally:
        stopped.cancel()
        await handler.on_close()
        await outbox.close(flush_timeout=2.0)
        if writer is not None:
            with contextlib.suppress(Exception):
                writer.close()


def _blocking_write(stream: BinaryIO, data: bytes) -> None:
    stream.write(data + b"\n")
    stream.flush()
