"""A bounded single-producer, single-consumer hand-off that knows when either side has gone away.

``asyncio.Queue`` cannot tell a blocked producer that the consumer left, which is exactly what the drain
rule needs: a consumer that closes (or drops) its end must release the producer, which then keeps reading
and classifying without forwarding.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Generic, TypeVar

__all__ = ["DEFAULT_CAPACITY", "BoundedChannel"]

T = TypeVar("T")

#: Items per hop, as pinned by the contract (agent_wrapper.md §4/§5.2).
DEFAULT_CAPACITY = 32


class BoundedChannel(Generic[T]):
    """At most ``capacity`` items in flight; ``send`` waits for room, ``recv`` waits for an item."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError("capacity must be positive")
        self._capacity = capacity
        self._items: deque[T] = deque()
        self._sender_closed = False
        self._receiver_closed = False
        self._reached_end = False
        self._room: asyncio.Event = asyncio.Event()
        self._data: asyncio.Event = asyncio.Event()
        self._finished: asyncio.Event = asyncio.Event()
        self._room.set()

    @property
    def receiver_closed(self) -> bool:
        """The receiver stopped reading; sends are dropped."""
        return self._receiver_closed

    @property
    def sender_closed(self) -> bool:
        """The sender ended the stream; the receiver gets what is queued, then the end."""
        return self._sender_closed

    def __len__(self) -> int:
        return len(self._items)

    async def send(self, item: T) -> bool:
        """Queue ``item`` once there is room; False (item discarded) if the receiver has gone or the
        sending side was closed meanwhile (a cancelled run)."""
        while not self._receiver_closed and not self._sender_closed and len(self._items) >= self._capacity:
            self._room.clear()
            await self._room.wait()
        if self._receiver_closed or self._sender_closed:
            return False
        self._items.append(item)
        self._data.set()
        return True

    def close_sender(self) -> None:
        """No more items; the receiver sees the end after the buffered ones."""
        self._sender_closed = True
        self._data.set()
        self._room.set()

    async def recv(self) -> T | None:
        """The next item, or None at the end of the stream (or once the receiver closed)."""
        while not self._items and not self._sender_closed and not self._receiver_closed:
            self._data.clear()
            await self._data.wait()
        if self._receiver_closed:
            return None
        if self._items:
            item = self._items.popleft()
            self._room.set()
            return item
        self._reached_end = True
        self._finished.set()
        return None

    def close_receiver(self) -> None:
        """The consumer leaves: buffered items are dropped and blocked senders are released."""
        if self._receiver_closed:
            return
        self._receiver_closed = True
        self._items.clear()
        self._room.set()
        self._data.set()
        self._finished.set()

    async def wait_consumer_done(self) -> None:
        """Return once the receiver has seen the end of the stream or has closed."""
        await self._finished.wait()
