"""Per-process event log with one sequence counter (sans-IO; no processes, no clock).

Output chunks, the exit and the close share one counter starting at 1, as on Codex's wire.
``process/read`` is answered from here: chunks after ``afterSeq``, ``maxBytes`` soft (at least one
chunk; reaching it sets ``nextSeq`` just past the last chunk), ``nextSeq`` = last event + 1 once everything was returned. Retained output is bounded: the
oldest chunks are dropped once ``retain_bytes`` is exceeded, so a process nobody reads cannot grow
memory without limit.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

__all__ = ["DEFAULT_RETAIN_BYTES", "LoggedChunk", "OutputLog", "ReadSlice"]

DEFAULT_RETAIN_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class LoggedChunk:
    seq: int
    stream: str
    data: bytes


@dataclass(frozen=True, slots=True)
class ReadSlice:
    chunks: list[LoggedChunk]
    next_seq: int
    exited: bool
    exit_code: int | None
    closed: bool


class OutputLog:
    def __init__(self, retain_bytes: int = DEFAULT_RETAIN_BYTES) -> None:
        self._retain = retain_bytes
        self._chunks: deque[LoggedChunk] = deque()
        self._retained = 0
        self._last_seq = 0
        self.exit_code: int | None = None
        self.exit_seq: int | None = None
        self.close_seq: int | None = None
        self.dropped_bytes = 0

    @property
    def last_seq(self) -> int:
        return self._last_seq

    @property
    def exited(self) -> bool:
        return self.exit_seq is not None

    @property
    def closed(self) -> bool:
        return self.close_seq is not None

    def _next(self) -> int:
        self._last_seq += 1
        return self._last_seq

    def append_output(self, stream: str, data: bytes) -> LoggedChunk:
        if self.closed:
            raise ValueError("output after close")
        chunk = LoggedChunk(self._next(), stream, data)
        self._chunks.append(chunk)
        self._retained += len(data)
        while self._retained > self._retain and len(self._chunks) > 1:
            old = self._chunks.popleft()
            self._retained -= len(old.data)
            self.dropped_bytes += len(old.data)
        return chunk

    def mark_exited(self, exit_code: int) -> int:
        if self.exited:
            raise ValueError("exited twice")
        self.exit_code = exit_code
        self.exit_seq = self._next()
        return self.exit_seq

    def mark_closed(self) -> int:
        if self.closed:
            raise ValueError("closed twice")
        self.close_seq = self._next()
        return self.close_seq

    def has_news(self, after_seq: int) -> bool:
        """Whether a read after ``after_seq`` would see a new chunk or a new exit/close event."""
        return self._last_seq > after_seq

    def read(self, after_seq: int | None, max_bytes: int | None) -> ReadSlice:
        after = after_seq or 0
        picked: list[LoggedChunk] = []
        total = 0
        truncated = False
        for chunk in self._chunks:
            if chunk.seq <= after:
                continue
            picked.append(chunk)
            total += len(chunk.data)
            if max_bytes is not None and total >= max_bytes:
                # Codex stops here and points nextSeq just past this chunk, even if only
                # exit/close events follow.
                truncated = True
                break
        next_seq = picked[-1].seq + 1 if truncated else self._last_seq + 1
        return ReadSlice(picked, next_seq, self.exited, self.exit_code, self.closed)
