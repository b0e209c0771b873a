"""Telling a thread's subscribers about a change a request made, and the caller too even when it does not
subscribe to that thread (Codex sends the requester the notification either way)."""

from __future__ import annotations

from app_server.connection import Session
from app_server.handlers.table import app_of
from app_server.protocol import notices

__all__ = ["announce"]


async def announce(session: Session, thread_id: str, note: notices.Notice) -> None:
    loaded = app_of(session).threads.loaded.get(thread_id)
    if loaded is not None:
        await loaded.emit(note)
    if loaded is None or session not in loaded.subscribers:
        await notices.send(session, note)
