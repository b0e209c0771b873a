"""The contract between transports and the sessions that sit on them."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

__all__ = [
    "ConnectionHandler", "MessageHandler", "Outbox", "Transport", "TransportClosed", "WriteFn", "WriteManyFn",
    "serve_transport",
]

logger = logging.getLogger(__name__)

WriteFn = Callable[[bytes], Awaitable[None]]
#: Writes several messages at once (one socket write for the lot): a transport's ``send_many``.
WriteManyFn = Callable[[Sequence[bytes]], Awaitable[None]]
#: At most this many queued messages (and about this many bytes) go out in one ``write_many``.
_BATCH_MESSAGES = 512
_BATCH_BYTES = 1 << 20


class Transport(Protocol):
    """A message-oriented edge: one complete JSON-RPC message per ``send``/``recv``."""

    async def send(self, data: bytes) -> None:
        """Write one message; raises ``ConnectionError`` once the connection is gone."""

    async def recv(self) -> bytes | None:
        """The next complete message, or None at end of stream."""

    async def close(self) -> None:
        """End the connection (idempotent); the other side's ``recv`` then returns None."""


class TransportClosed(ConnectionError):
    """A write on an edge whose connection has ended."""


class MessageHandler(Protocol):
    """What a transport drives: one object per connection."""

    async def on_message(self, raw: bytes) -> None:
        """One complete inbound message (a line without its LF, or a text frame's bytes)."""

    async def on_line_too_long(self, size: int) -> None:
        """An inbound line exceeded the size limit and was dropped."""

    async def on_close(self) -> None:
        """The remote side went away (EOF or a closed socket); no more messages will arrive."""


#: Builds the handler for a new connection from its outbox.
ConnectionHandler = Callable[["Outbox"], MessageHandler]


class Outbox:
    """Ordered, bounded outgoing queue for one connection with a single writer task.

    The queue is bounded both in messages and in bytes (a single message larger than the byte budget
    still goes out, alone). ``send`` waits while either bound is reached, so a client that stops reading
    backpressures its own producers instead of growing the server's memory. Once the write side fails or
    the outbox is closed, further sends are dropped silently: the connection is gone and nobody can read.

    With ``write_many`` the writer hands everything queued since its last write to it at once: with many
    connections and many concurrent turns, one socket write per message was most of the server's CPU.
    """

    def __init__(
        self, write: WriteFn, *, max_queued: int = 4096, max_queued_bytes: int = 16 * 1024 * 1024,
        write_many: WriteManyFn | None = None,
    ) -> None:
        self._write = write
        self._write_many = write_many
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue(max_queued)
        self._max_bytes = max_queued_bytes
        self._queued_bytes = 0
        self._drained = asyncio.Event()
        self._closed = False
        self._task: asyncio.Task[None] | None = None
        self.failed = asyncio.Event()

    def start(self) -> None:
        """Start the single writer task (call once, from the running loop)."""
        self._task = asyncio.get_running_loop().create_task(self._run(), name="outbox-writer")

    @property
    def closed(self) -> bool:
        """The outbox was closed or its write side failed; sends are then dropped."""
        return self._closed or self.failed.is_set()

    @property
    def queued_bytes(self) -> int:
        """Bytes queued and not yet written (what the byte bound is measured against)."""
        return self._queued_bytes

    def has_room(self, size: int) -> bool:
        """Whether ``send`` of ``size`` bytes would queue at once, without waiting (or be dropped)."""
        if self.closed:
            return True
        return not self._queue.full() and (not self._queued_bytes or self._queued_bytes + size <= self._max_bytes)

    def offer(self, data: bytes) -> bool:
        """Queue ``data`` now if there is room (True), or say that ``send`` would have to wait (False).

        Dropped (True) once the outbox is closed, as ``send`` drops it. A broadcast offers the same bytes
        to every connection: done synchronously, that is a check and an append per connection instead of
        a chain of coroutines, which at hundreds of connections was most of a status change's cost.
        """
        if self.closed:
            return True
        if not self.has_room(len(data)):
            return False
        self._queued_bytes += len(data)
        self._queue.put_nowait(data)
        return True

    async def send(self, data: bytes) -> None:
        """Queue ``data`` for the writer, waiting while the queue is full; dropped once the outbox is closed.
        """
        if self.closed:
            return
        while self._queued_bytes and self._queued_bytes + len(data) > self._max_bytes:
            self._drained.clear()
            await self._drained.wait()
            if self.closed:
                return
        self._queued_bytes += len(data)
        await self._queue.put(data)

    async def close(self, *, flush_timeout: float = 5.0) -> None:
        """Write what is queued (bounded by ``flush_timeout``), then stop the writer."""
        if self._closed:
            return
        self._closed = True
        self._drained.set()  # senders waiting for room give up: the outbox takes nothing more
        if self._task is None:
            return
        try:
            self._queue.put_nowait(None)
        except asyncio.QueueFull:
            self._task.cancel()
        try:
            await asyncio.wait_for(asyncio.shield(self._task), flush_timeout)
        except (TimeoutError, asyncio.CancelledError):
            self._task.cancel()

    async def _run(self) -> None:
        while True:
            data = await self._queue.get()
            if data is None:
                return
            batch = self._take_batch(data)
            try:
                if not self.failed.is_set():  # after a failure keep draining so blocked producers wake up
                    if len(batch) == 1 or self._write_many is None:
                        for item in batch:
                            await self._write(item)
                    else:
                        await self._write_many(batch)
            except Exception as exc:  # a vanished peer: stop writing, never crash the server
                logger.info("connection write failed: %s", exc)
                self.failed.set()
            finally:
                self._queued_bytes -= sum(map(len, batch))
                self._drained.set()

    def _take_batch(self, first: bytes) -> list[bytes]:
        """``first`` and, with ``write_many``, what else is queued right now (never the closing None)."""
        batch = [first]
        if self._write_many is None:
            return batch
        size = len(first)
        queue = self._queue
        while not queue.empty() and len(batch) < _BATCH_MESSAGES and size < _BATCH_BYTES:
            item = queue.get_nowait()
            if item is None:  # close: put the marker back for the loop to see after this batch
                queue.put_nowait(None)
                break
            batch.append(item)
            size += len(item)
        return batch


async def serve_transport(
    make_handler: ConnectionHandler, transport: Transport, *, flush_timeout: float = 1.0
) -> None:
    """Drive one server-side connection over a message transport until it ends (the memory edge, tests).

    The handler's ``on_close`` runs before the outbox is flushed, so requests already read still get
    their responses.
    """
    write_many: WriteManyFn | None = getattr(transport, "send_many", None)
    outbox = Outbox(transport.send, write_many=write_many)
    outbox.start()
    handler = make_handler(outbox)
    try:
        while (raw := await transport.recv()) is not None:
            await handler.on_message(raw)
    finally:
        await handler.on_close()
        await outbox.close(flush_timeout=flush_timeout)
        await transport.close()
