"""Hook helpers for code that hands a whole object over instead of calling ``record`` per message."""

from __future__ import annotations

from pycodex.trace.recorder import active_tracer, record
from pycodex.transport.base import Outbox

__all__ = ["traced_outbox"]


class _TracedOutbox(Outbox):
    """An outbox that records each message it is given, then hands it to the transport's outbox."""

    def __init__(self, inner: Outbox, conn: int) -> None:  # no super().__init__: the inner one does the work
        self._inner = inner
        self._conn = conn
        self.failed = inner.failed

    def start(self) -> None:
        self._inner.start()

    @property
    def closed(self) -> bool:
        return self._inner.closed

    @property
    def queued_bytes(self) -> int:
        return self._inner.queued_bytes

    async def send(self, data: bytes) -> None:
        if not self._inner.closed:
            record("out", "client", self._conn, data)
        await self._inner.send(data)

    async def close(self, *, flush_timeout: float = 5.0) -> None:
        await self._inner.close(flush_timeout=flush_timeout)


def traced_outbox(outbox: Outbox, conn: int) -> Outbox:
    """``outbox`` itself when no trace is being written, else a recording wrapper around it."""
    return outbox if active_tracer() is None else _TracedOutbox(outbox, conn)
