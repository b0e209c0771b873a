"""The thread and turn a log record belongs to, carried by contextvars.

A turn's task calls ``bind_turn`` once where it starts; asyncio copies the context into every task and
``to_thread`` call it spawns, so every record logged on the turn's behalf carries both ids without any
call site passing them along. ``pycodex.logging_setup`` puts them on the record.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar

__all__ = ["TurnContextFilter", "bind_turn", "current_ids"]

_THREAD_ID: ContextVar[str | None] = ContextVar("pycodex_log_thread_id", default=None)
_TURN_ID: ContextVar[str | None] = ContextVar("pycodex_log_turn_id", default=None)


def bind_turn(thread_id: str, turn_id: str | None) -> None:
    """Tag every later record of the current context (a turn's task and what it spawns) with these ids."""
    _THREAD_ID.set(thread_id)
    _TURN_ID.set(turn_id)


def current_ids() -> tuple[str | None, str | None]:
    """The (thread id, turn id) of the running turn, None outside one."""
    return _THREAD_ID.get(), _TURN_ID.get()


class TurnContextFilter(logging.Filter):
    """Adds ``thread_id`` and ``turn_id`` (None outside a turn) to every record it sees."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Stamp ``record`` with the current turn's ids; never filters anything out."""
        record.thread_id, record.turn_id = current_ids()
        return True
