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
from collections.abc import Awaitable, Callable, Sequence
from typing import BinaryIO, TypedDict, Unpack

from pycodex.jsonrpc.framing import DEFAULT_MAX_LINE_BYTES, LineBuffer, OverlongLine
from pycodex.transport.base import ConnectionHandler, Outbox, TransportClosed, WriteFn

__all__ = ["StreamTransport", "serve_stdio"]

logger = logging.getLogger(__name__)

_READ_CHUNK = 1 << 20


ReadFn = Callable[[int], Awaitable[bytes]]
OverlongFn = Callable[[int], Awaitable[None]]


class StreamOptions(TypedDict, total=False):
    """The keyword options of :class:`StreamTransport` that its constructors pass through."""

    max_line_bytes: int
    read_chunk: int
    keep_blank: bool
    pending: bytes


class StreamTransport:
    """LF-delimited messages over a byte stream: the one stdio edge (servers and the client).

    ``read(n)`` returns up to ``n`` bytes (empty at EOF); ``write(line)`` writes one line with its LF.
    An unterminated last line still counts. Blank lines are skipped unless ``keep_blank`` (the
    app-server reports them as malformed, as Codex does); an overlong line is dropped and reported to
    ``on_overlong`` (or logged), in order with the lines around it. ``pending``: bytes of the stream
    already read by someone else (the app-server's start-up fast path), delivered first.
    """

    def __init__(
        self,
        read: ReadFn,
        write: WriteFn,
        close: Callable[[], Awaitable[None]],
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        read_chunk: int = 65536,
        keep_blank: bool = False,
        pending: bytes = b"",
    ) -> None:
        self._read = read
        self._write = write
        self._close = close
        self._lines = LineBuffer(max_line_bytes)
        self._ready: collections.deque[bytes | OverlongLine] = collections.deque(self._lines.feed(pending))
        self._chunk = read_chunk
        self._keep_blank = keep_blank
        self._eof = False
        self.on_overlong: OverlongFn | None = None
        #: Set when the write side is gone: the reader of our stdout closed it (EPIPE), so nobody can read us.
        self.write_closed = asyncio.Event()

    @classmethod
    def over_streams(
        cls, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, **options: Unpack[StreamOptions]
    ) -> StreamTransport:
        """Over an asyncio stream pair (a child's stdout and stdin, a socket)."""

        async def write(line: bytes) -> None:
            if writer.is_closing():
                raise TransportClosed("stream closed")
            try:
                writer.write(line)
                await writer.drain()
            except (ConnectionError, RuntimeError) as exc:
                raise TransportClosed(f"stream closed: {exc}") from exc

        async def close() -> None:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

        return cls(reader.read, write, close, **options)

    @classmethod
    async def open_stdio(
        cls, stdin: BinaryIO, stdout: BinaryIO, **options: Unpack[StreamOptions]
    ) -> StreamTransport:
        """Over this process's stdin/stdout; files epoll cannot watch are served by worker threads."""
        reader = await _open_reader(stdin)
        write_closed = asyncio.Event()
        writer = await _open_writer(stdout, write_closed)

        async def read(size: int) -> bytes:
            if reader is not None:
                return await reader.read(size)
            return await asyncio.to_thread(os.read, stdin.fileno(), size)

        async def write(line: bytes) -> None:
            try:
                if writer is None:
                    await asyncio.to_thread(_blocking_write, stdout, line)
                    return
                if writer.is_closing():
                    raise BrokenPipeError("stdout was closed by its reader")
                writer.write(line)
                await writer.drain()
            except (BrokenPipeError, ConnectionResetError):
                write_closed.set()
                raise

        async def close() -> None:
            if writer is not None:
                with contextlib.suppress(Exception):
                    writer.close()

        transport = cls(read, write, close, **options)
        transport.write_closed = write_closed
        return transport

    @property
    def buffered(self) -> bool:
        """A complete message is waiting: ``recv`` will not read."""
        return bool(self._ready)

    async def send(self, data: bytes) -> None:
        """Write one message followed by its LF delimiter."""
        await self._write(data + b"\n")

    async def send_many(self, messages: Sequence[bytes]) -> None:
        """Write several messages, each with its LF, in one write."""
        await self._write(b"\n".join(messages) + b"\n")

    async def recv(self) -> bytes | None:
        """The next complete line without its LF, or None at EOF (an overlong line is reported, not returned).
        """
        while True:
            while not self._ready:
                if self._eof:
                    return None
                data = await self._read(self._chunk)
                self._ready.extend(self._lines.feed(data) if data else self._lines.feed_eof())
                self._eof = not data
            line = self._ready.popleft()
            if isinstance(line, OverlongLine):
                if self.on_overlong is not None:
                    await self.on_overlong(line.size)
                else:
                    logger.warning("dropping an overlong line of %d bytes", line.size)
            elif self._keep_blank or line.strip():
                return line

    async def close(self) -> None:
        """Close the write side (the reader sees EOF when the peer closes its end)."""
        await self._close()


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


class _WatchedPipe(asyncio.streams.FlowControlMixin):
    """The stdout pipe's protocol: asyncio watches a pipe's write end for the reader closing it (and for a
    failed write); either way ``closed`` is set, so the server can stop instead of serving nobody."""

    def __init__(self, closed: asyncio.Event) -> None:
        super().__init__()
        self._closed_event = closed

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed_event.set()
        super().connection_lost(exc)


async def _open_writer(stdout: BinaryIO, closed: asyncio.Event) -> asyncio.StreamWriter | None:
    if not _is_streamable(stdout.fileno()):
        return None
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.connect_write_pipe(lambda: _WatchedPipe(closed), stdout)
    return asyncio.StreamWriter(transport, protocol, None, loop)


async def serve_stdio(
    make_handler: ConnectionHandler,
    *,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    stop: asyncio.Event | None = None,
    pending: bytes = b"",
) -> None:
    """Serve one connection on stdin/stdout until stdin reaches EOF, ``stop`` is set or stdout's reader
    closes it (EPIPE: nobody can read the answers); ``pending`` holds bytes of stdin read before (they
    come first).

    Either way the handler's ``on_close`` runs while stdout is still open, so requests already read
    get their responses.
    """
    transport = await StreamTransport.open_stdio(
        stdin or sys.stdin.buffer,
        stdout or sys.stdout.buffer,
        max_line_bytes=max_line_bytes,
        read_chunk=_READ_CHUNK,
        keep_blank=True,
        pending=pending,
    )
    outbox = Outbox(transport.send, write_many=transport.send_many)
    outbox.start()
    handler = make_handler(outbox)
    transport.on_overlong = handler.on_line_too_long
    stopped = asyncio.ensure_future(_first_of((stop or asyncio.Event()), transport.write_closed, outbox.failed))
    try:
        while not stopped.done():
            if transport.buffered:
                raw = await transport.recv()
            else:
                recv = asyncio.ensure_future(transport.recv())
                await asyncio.wait((recv, stopped), return_when=asyncio.FIRST_COMPLETED)
                if not recv.done():
                    recv.cancel()  # a worker thread stuck in read() is left behind: the process is ending
                    break
                raw = recv.result()
            if raw is None:
                logger.debug("stdin reached EOF")
                break
            await handler.on_message(raw)
        else:
            if transport.write_closed.is_set() or outbox.failed.is_set():
                logger.info("stdout was closed by its reader: stopping")
            else:
                logger.debug("stdio transport stopped")
    finally:
        stopped.cancel()
        await handler.on_close()
        await outbox.close(flush_timeout=2.0)
        await transport.close()


async def _first_of(*events: asyncio.Event) -> None:
    """Return once any of ``events`` is set."""
    waits = [asyncio.ensure_future(event.wait()) for event in events]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()


def _blocking_write(stream: BinaryIO, data: bytes) -> None:
    stream.write(data)
    stream.flush()
