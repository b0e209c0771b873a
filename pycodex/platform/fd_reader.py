"""A pull-based reader for a child's pipe or pty master: ``os.read`` when asked, nothing read ahead.

asyncio's StreamReader copies each byte three times (``os.read``, ``feed_data`` into its buffer,
``read(n)`` slicing it out) and runs protocol callbacks per chunk; here a read is one ``os.read`` on a
non-blocking fd, and only when that would block do we wait for readability (one future, one
``add_reader``, removed again). A slow consumer still throttles the child through the kernel buffer.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os

__all__ = ["FdReader"]


class FdReader:
    """Owns ``fd`` (made non-blocking): closed exactly once, at EOF, on ``close()``, or when a read is cancelled."""

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self._fd = fd
        self._waiter: asyncio.Future[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def closed(self) -> bool:
        """The descriptor was closed (EOF reached, ``close()`` called or a read cancelled)."""
        return self._fd < 0

    async def read(self, size: int) -> bytes:
        """Up to ``size`` bytes; ``b""`` at end of stream (EIO, a pty whose last writer left, too)."""
        while self._fd >= 0:
            try:
                data = os.read(self._fd, size)
            except BlockingIOError:
                await self._readable()
                continue
            except OSError as exc:
                if exc.errno != errno.EIO:
                    raise
                data = b""
            if not data:
                self.close()
            return data
        return b""

    async def _readable(self) -> None:
        if self._waiter is not None:
            raise RuntimeError("FdReader.read is already waiting in another task")
        loop = self._loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        loop.add_reader(self._fd, _wake, waiter)
        try:
            await waiter
        except BaseException:
            self.close()  # a cancelled reader is done with the stream: nobody else reads it
            raise
        finally:
            self._stop_waiting()

    def _stop_waiting(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is None:
            return
        if self._loop is not None and self._fd >= 0:
            self._loop.remove_reader(self._fd)
        if not waiter.done():
            waiter.set_result(None)  # the waiting read then sees the closed fd and returns b""

    def close(self) -> None:
        """Stop reading and close the fd (idempotent); a read waiting meanwhile returns ``b""``."""
        if self._fd < 0:
            return
        self._stop_waiting()
        fd, self._fd = self._fd, -1
        with contextlib.suppress(OSError):
            os.close(fd)

    def __del__(self) -> None:  # backstop for a stream nobody ever read; a no-op once closed
        if self._fd >= 0 and self._waiter is None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
