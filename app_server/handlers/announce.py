"""Telling clients about a change a request made to a thread: its subscribers, and the caller too even when it
does not subscribe to that thread (Codex sends the requester the notification either way); a lifecycle or
metadata change (``notices.BROADCAST``) goes to every connection, whether the thread is loaded or not."""

from __future__ import annotations

from app_server.connection import Session
from app_server.handlers.table import app_of
from app_server.protocol import notices

__all__ = ["announce"]


async def announce(session: Session, thread_id: str, note: notices.Notice) -> None:
    threads = app_of(session).threads
    loaded = threads.loaded.get(thread_id)
    if note.method in notices.BROADCAST:
        await (loaded.emit(note) if loaded is not None else threads.broadcast(note))
        return
    if loaded is not None:
        await loaded.emit(note)
    if loaded is None or session not in loaded.subscribers:
        await notices.send(session, note)
