"""Durable thread store of the app-server: append-only JSONL rollouts (the truth) plus a SQLite list index.

Works on plain JSON-able dicts in v2 wire shape, so it does not depend on the protocol models.
"""

from .errors import (
    InvalidCursorError,
    InvalidThreadIdError,
    RolloutCorruptError,
    StoreError,
    ThreadArchivedStateError,
    ThreadLockedError,
    ThreadNotFoundError,
    WriterClosedError,
)
from .ids import new_uuid7, parse_thread_id, uuid7_timestamp_ms
from .reconstruct import LoadedThread
from .records import persisted_item
from .store import ThreadPage, ThreadStore
from .writer import RolloutWriter

__all__ = [
    "InvalidCursorError",
    "InvalidThreadIdError",
    "LoadedThread",
    "RolloutCorruptError",
    "RolloutWriter",
    "StoreError",
    "ThreadArchivedStateError",
    "ThreadLockedError",
    "ThreadNotFoundError",
    "ThreadPage",
    "ThreadStore",
    "WriterClosedError",
    "new_uuid7",
    "parse_thread_id",
    "persisted_item",
    "uuid7_timestamp_ms",
]
