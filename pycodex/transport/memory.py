"""The in-memory edge: a connected pair of transports (tests, ``pycodex exec``).

Like the MCP SDK's ``create_client_server_memory_streams``: what one end sends, the other receives, in
order. Each direction is bounded, so a reader that stops reading backpressures the writer as a socket
would. Closing either end ends both directions once what was already sent has been read.
"""

from __future__ import annotations

import asyncio
from typing import Final

from pycodex.transport.base import TransportClosed

__all__ = ["MemoryTransport", "memory_pair"]

_EOF: Final = None


class _Pipe:
    def __init__(self, max_queued: int) -> None:
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue(max_queued)
        self.closed = False
        #: Set when the reading end closed: nobody will ever make room again.
        self.abandoned = asyncio.Event()

    def close(self, *, discard: bool = False) -> None:
        """Mark the end; ``discard`` (the reader's own close) drops unread messages, waking writers."""
        if discard:
            self.abandoned.set()
            while not self.queue.empty():
                self.queue.get_nowait()
        if self.closed:
            return
        self.closed = True
        try:
            self.queue.put_nowait(_EOF)
        except asyncio.QueueFull:
            pass  # the reader sees ``closed`` once it has drained the queue


class MemoryTransport:
    """One end of a :func:`memory_pair`."""

    def __init__(self, incoming: _Pipe, outgoing: _Pipe) -> None:
        self._in = incoming
        self._out = outgoing

    async def send(self, data: bytes) -> None:
        """Hand one message to the other end; raises ``TransportClosed`` once this end or its queue is shut.
        """
        pipe = self._out
        if pipe.closed:
            raise TransportClosed("in-memory transport is closed")
        try:
            pipe.queue.put_nowait(bytes(data))
            return
        except asyncio.QueueFull:
            pass
        # Full: wait for room, unless the reader goes away meanwhile.
        put = asyncio.ensure_future(pipe.queue.put(bytes(data)))
        abandoned = asyncio.ensure_future(pipe.abandoned.wait())
        try:
            await asyncio.wait((put, abandoned), return_when=asyncio.FIRST_COMPLETED)
        finally:
            abandoned.cancel()
            if not put.done():
                put.cancel()
        if not put.done() or put.cancelled():
            raise TransportClosed("in-memory transport is closed")

    async def recv(self) -> bytes | None:
        """The next message from the other end, or None once it closed and everything queued was read."""
        if self._in.closed and self._in.queue.empty():
            return None
        item = await self._in.queue.get()
        if item is None:
            self._in.queue.put_nowait(_EOF)  # later calls see the end too
        return item

    async def close(self) -> None:
        """Close both directions: the other end reads EOF, and what was sent to this end is dropped."""
        self._out.close()
        self._in.close(discard=True)


def memory_pair(max_queued: int = 1024) -> tuple[MemoryTransport, MemoryTransport]:
    """Two connected transports, conventionally (client end, server end)."""
    a_to_b, b_to_a = _Pipe(max_queued), _Pipe(max_queued)
    return MemoryTransport(b_to_a, a_to_b), MemoryTransport(a_to_b, b_to_a)
