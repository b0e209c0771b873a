"""Errors raised by the thread store. Messages follow the reference server's wording where one exists."""

from __future__ import annotations


class StoreError(Exception):
    """Base class of every thread-store error."""


class InvalidThreadIdError(StoreError, ValueError):
    """The id is not a UUID."""


class ThreadNotFoundError(StoreError, LookupError):
    """No rollout exists for the id."""

    def __init__(self, thread_id: str) -> None:
        super().__init__(f"no rollout found for thread id {thread_id}")
        self.thread_id = thread_id


class RolloutCorruptError(StoreError):
    """A rollout that cannot be rebuilt into a thread (empty, or no usable session_meta first line).

    The message names the thread, the file and, when one is to blame, the line: `<path>:<line>: <cause>`.
    """

    def __init__(self, thread_id: str, path: str, cause: str, line: int | None = None) -> None:
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"rollout of thread {thread_id} is unreadable: {where}: {cause}")
        self.thread_id = thread_id
        self.path = path
        self.line = line
        self.cause = cause


class ThreadLockedError(StoreError):
    """Another writer (this process, another pycodex or Codex) already appends to the rollout. Codex's
    wording; the router answers it as an invalid request (-32600), as Codex does."""

    def __init__(self, thread_id: str) -> None:
        super().__init__(f"thread {thread_id} already has an active writer")
        self.thread_id = thread_id


class ThreadArchivedStateError(StoreError):
    """Archive of an archived thread, or unarchive of a live one."""


class InvalidCursorError(StoreError, ValueError):
    """A list cursor that this store did not produce, or one made for another sort key."""


class WriterClosedError(StoreError):
    """Append on a closed rollout writer."""
