"""LF line framing for byte streams (stdio), sans-IO.

Splits on LF only: U+2028/U+2029 and bare CR are not line breaks (a CR before the LF is stripped, as
clients on some platforms write CRLF). Lines longer than ``max_line_bytes`` are discarded up to their
LF and reported as overlong instead of growing the buffer without bound.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_MAX_LINE_BYTES", "LineBuffer", "OverlongLine"]

#: Large enough for a 64 MiB message with room to spare; anything bigger is refused.
DEFAULT_MAX_LINE_BYTES = 160 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class OverlongLine:
    """A line that exceeded the limit; its bytes were dropped."""

    size: int


class LineBuffer:
    """Accumulate bytes and hand back complete lines (without the LF)."""

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self._max = max_line_bytes
        self._parts: list[bytes] = []
        self._size = 0
        self._discarding = False

    def feed(self, data: bytes) -> list[bytes | OverlongLine]:
        """Add ``data``; return the lines it completed, in order."""
        out: list[bytes | OverlongLine] = []
        start = 0
        while True:
            nl = data.find(b"\n", start)
            if nl < 0:
                self._append(data[start:])
                return out
            self._append(data[start:nl])
            out.append(self._take())
            start = nl + 1

    def feed_eof(self) -> list[bytes | OverlongLine]:
        """The stream ended: an unterminated last line still counts as a line."""
        if self._size or self._discarding:
            return [self._take()]
        return []

    def _append(self, chunk: bytes) -> None:
        if not chunk:
            return
        self._size += len(chunk)
        if self._discarding:
            return
        if self._size > self._max:
            self._parts.clear()
            self._discarding = True
            return
        self._parts.append(chunk)

    def _take(self) -> bytes | OverlongLine:
        size = self._size
        if self._discarding:
            line: bytes | OverlongLine = OverlongLine(size)
        else:
            joined = self._parts[0] if len(self._parts) == 1 else b"".join(self._parts)
            line = joined[:-1] if joined.endswith(b"\r") else joined
        self._parts = []
        self._size = 0
        self._discarding = False
        return line
