"""Per-process event log with one sequence counter (sans-IO; no processes, no clock).

Output chunks, the exit and the close share one counter starting at 1, as on Codex's wire.
``process/read`` is answered from here: chunks after ``afterSeq``, ``maxBytes`` soft (at least one
chunk; reaching it sets ``nextSeq`` just past the last chunk), ``nextSeq`` = last event + 1 once
everything was returned.

Retention is bounded twice, and a read simply starts at the oldest chunk still retained (Codex 0.169
answers a read behind its window the same way, without an error):
* per process, the newest ``retain_bytes`` (Codex keeps 1 MiB per process, checked on the binary);
* per session, a shared ``RetentionBudget``: past it, finished processes give up their output first
  (oldest first), then the appending process its oldest chunks.
Bytes live in fixed-size anonymous ``mmap`` pages rather than one ``bytes`` object per chunk: a page is
given up as soon as no retained chunk uses it, so dropped output goes back to the OS instead of leaving
a fragmented heap that RSS never shrinks from. A few freed pages wait in a ``PagePool`` (one per
session, shared by its logs) for the next output: mapping a fresh page costs a syscall, and a fault
and a zeroing per 4 KiB, which otherwise came with the first MiB of every process.
"""

from __future__ import annotations

import mmap
from collections import deque
from dataclasses import dataclass

__all__ = [
    "DEFAULT_RETAIN_BYTES",
    "DEFAULT_SESSION_RETAIN_BYTES",
    "PAGE_BYTES",
    "LoggedChunk",
    "OutputLog",
    "PagePool",
    "ReadSlice",
    "RetentionBudget",
]

#: Codex 0.169 retains the newest 1 MiB of output per process (observed: 1047360 bytes of 5 MB).
DEFAULT_RETAIN_BYTES = 1024 * 1024
DEFAULT_SESSION_RETAIN_BYTES = 32 * 1024 * 1024
PAGE_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class LoggedChunk:
    """One retained output chunk: its sequence number, stream and bytes."""

    seq: int
    stream: str
    data: bytes


@dataclass(frozen=True, slots=True)
class ReadSlice:
    """What one ``process/read`` returns: chunks, the next sequence to ask for and the process's end state."""

    chunks: list[LoggedChunk]
    next_seq: int
    exited: bool
    exit_code: int | None
    closed: bool


class PagePool:
    """Freed ``PAGE_BYTES`` pages kept for reuse, at most ``keep`` of them; beyond that one is unmapped."""

    def __init__(self, keep: int) -> None:
        self._keep = keep
        self._free: list[mmap.mmap] = []

    @property
    def free_bytes(self) -> int:
        """Bytes held in free pages."""
        return len(self._free) * PAGE_BYTES

    def take(self) -> mmap.mmap:
        """A free page, or a freshly mapped one when the pool is empty."""
        return self._free.pop() if self._free else mmap.mmap(-1, PAGE_BYTES)

    def give(self, page: mmap.mmap) -> None:
        """Return a page: kept for reuse while the pool has room, else unmapped at once."""
        if len(self._free) < self._keep and len(page) == PAGE_BYTES:
            self._free.append(page)
        else:
            page.close()  # munmap: the memory goes back to the OS now

    def clear(self) -> None:
        """Unmap every pooled page."""
        while self._free:
            self._free.pop().close()


class RetentionBudget:
    """Retained output bytes shared by the logs of one session, and their pool of free pages."""

    def __init__(self, limit: int = DEFAULT_SESSION_RETAIN_BYTES, pool_pages: int = 16) -> None:
        self.limit = limit
        self.used = 0
        self.pages = PagePool(pool_pages)
        # Closed logs still holding output, in the order they closed: the first to give way.
        self._finished: dict[int, OutputLog] = {}

    def finished(self, log: OutputLog) -> None:
        """``log`` closed while still holding output: it gives way first when the budget is exceeded."""
        self._finished[id(log)] = log

    def forget(self, log: OutputLog) -> None:
        """``log`` holds no output any more (or was discarded): never reclaim from it."""
        self._finished.pop(id(log), None)

    def reclaim(self, requester: OutputLog) -> None:
        """Bring ``used`` under the limit: finished logs first (oldest first), then the requester."""
        while self.used > self.limit and self._finished:
            oldest = next(iter(self._finished))
            self._finished.pop(oldest).release()
        if self.used > self.limit:
            requester.trim(self.used - self.limit)


# One retained chunk: (seq, stream, page, offset, length).
_Entry = tuple[int, str, mmap.mmap, int, int]


class OutputLog:
    """The event log of one process: output chunks, exit and close on one sequence counter."""

    def __init__(
        self, retain_bytes: int = DEFAULT_RETAIN_BYTES, budget: RetentionBudget | None = None
    ) -> None:
        self._retain = retain_bytes
        self._budget = budget
        self._chunks: deque[_Entry] = deque()
        self._pages: deque[mmap.mmap] = deque()  # every page some retained chunk uses, oldest first
        self._fill = 0  # bytes used in the newest page
        self._room = 0  # size of the newest page
        # Freed pages wait here for reuse: the session's pool, or one page of our own without a budget.
        self._own_pool = budget is None
        self._pool = budget.pages if budget is not None else PagePool(1)
        self._retained = 0
        self._last_seq = 0
        self.exit_code: int | None = None
        self.exit_seq: int | None = None
        self.close_seq: int | None = None
        self.dropped_bytes = 0

    @property
    def last_seq(self) -> int:
        """The sequence number of the last event logged (0 before the first)."""
        return self._last_seq

    @property
    def retained_bytes(self) -> int:
        """Output bytes still retained for reads."""
        return self._retained

    @property
    def mapped_bytes(self) -> int:
        """Memory held in pages (retained chunks, page slack and a pool of our own)."""
        spare = self._pool.free_bytes if self._own_pool else 0
        return sum(len(page) for page in self._pages) + spare

    @property
    def exited(self) -> bool:
        """The exit was logged."""
        return self.exit_seq is not None

    @property
    def closed(self) -> bool:
        """The close was logged (no output follows)."""
        return self.close_seq is not None

    def _next(self) -> int:
        self._last_seq += 1
        return self._last_seq

    def _new_page(self, size: int) -> mmap.mmap:
        page = self._pool.take() if size <= PAGE_BYTES else mmap.mmap(-1, size)
        self._pages.append(page)
        self._room = len(page)
        self._fill = 0
        return page

    def append_output(self, stream: str, data: bytes | memoryview) -> int:
        """Log one chunk; returns its seq."""
        return self.append_read(stream, data, len(data) or 1)

    def append_read(self, stream: str, data: bytes | memoryview, chunk_bytes: int) -> int:
        """Log one read as chunks of at most ``chunk_bytes`` (an empty read as one empty chunk);
        returns the first chunk's seq. On the output path: one copy and one retention check per read."""
        if self.close_seq is not None:
            raise ValueError("output after close")
        size = len(data)
        # Chunks sit in their pages in seq order (an empty one on the newest page), so a page is free
        # once the oldest chunk is on a later one. A read's chunks share a page.
        page = self._pages[-1] if self._pages and size <= self._room - self._fill else self._new_page(size)
        offset = self._fill
        page[offset : offset + size] = data
        self._fill = offset + size
        first = seq = self._last_seq + 1
        append = self._chunks.append
        for start in range(0, size, chunk_bytes):
            append((seq, stream, page, offset + start, min(chunk_bytes, size - start)))
            seq += 1
        if not size:
            append((seq, stream, page, offset, 0))
            seq += 1
        self._last_seq = seq - 1
        self._retained += size
        budget = self._budget
        if budget is not None:
            budget.used += size
        if self._retained > self._retain:
            self.trim(self._retained - self._retain)
        if budget is not None and budget.used > budget.limit:
            budget.reclaim(self)
        return first

    def _charge(self, delta: int) -> None:
        self._retained += delta
        if self._budget is not None:
            self._budget.used += delta

    def trim(self, nbytes: int) -> None:
        """Drop the oldest chunks until ``nbytes`` are freed, always keeping the newest one."""
        freed = 0
        while freed < nbytes and len(self._chunks) > 1:
            freed += self._drop_oldest()

    def _drop_oldest(self) -> int:
        _, _, page, _, size = self._chunks.popleft()
        self._charge(-size)
        self.dropped_bytes += size
        following = self._chunks[0][2] if self._chunks else None
        if following is not page and self._pages and self._pages[0] is page:
            self._retire(self._pages.popleft())
        return size

    def _retire(self, page: mmap.mmap) -> None:
        if self.closed and self._own_pool:
            page.close()  # no more output here: nobody would reuse it
        else:
            self._pool.give(page)

    def release(self) -> None:
        """Drop everything retained (session end, or the session budget needs it)."""
        while self._chunks:
            self._drop_oldest()
        while self._pages:
            self._retire(self._pages.popleft())
        if self._own_pool:
            self._pool.clear()

    def forget(self) -> None:
        """Release and leave the session budget (the process is gone for good)."""
        self.release()
        if self._budget is not None:
            self._budget.forget(self)

    def mark_exited(self, exit_code: int) -> int:
        """Log the exit with ``exit_code``; returns its sequence number."""
        if self.exited:
            raise ValueError("exited twice")
        self.exit_code = exit_code
        self.exit_seq = self._next()
        return self.exit_seq

    def mark_closed(self) -> int:
        """Log the close (after the last output); returns its sequence number."""
        if self.closed:
            raise ValueError("closed twice")
        self.close_seq = self._next()
        if self._budget is not None and self._chunks:
            self._budget.finished(self)
        if self._own_pool:  # no more output: its free page will not be needed
            self._pool.clear()
        return self.close_seq

    def has_news(self, after_seq: int) -> bool:
        """Whether a read after ``after_seq`` would see a new chunk or a new exit/close event."""
        return self._last_seq > after_seq

    def read(self, after_seq: int | None, max_bytes: int | None) -> ReadSlice:
        """The events after ``after_seq``, at least one chunk and about ``max_bytes`` of them
        (``process/read``)."""
        after = after_seq or 0
        picked: list[LoggedChunk] = []
        total = 0
        truncated = False
        for seq, stream, page, offset, size in self._chunks:
            if seq <= after:
                continue
            picked.append(LoggedChunk(seq, stream, page[offset : offset + size]))
            total += size
            if max_bytes is not None and total >= max_bytes:
                # Codex stops here and points nextSeq just past this chunk, even if only
                # exit/close events follow.
                truncated = True
                break
        next_seq = picked[-1].seq + 1 if truncated else self._last_seq + 1
        return ReadSlice(picked, next_seq, self.exited, self.exit_code, self.closed)
