"""Telling clients about a change a request made to a thread: its subscribers, and the caller too even when it
does not subscribe to that thread (Codex sends the requester the notification either way); a lifecycle or
metadata change (``notices.BROADCAST``) goes to every connection, whether the thread is loaded or not."""

from __future__ import annotations

from app_server.context import HandlerContext
from app_server.protocol import notices

__all__ = ["announce"]


async def announce(ctx: HandlerContext, thread_id: str, note: notices.Notice) -> None:
    threads = ctx.services.threads
    loaded = threads.loaded.get(thread_id)
    if note.method in notices.BROADCAST:
        await (loaded.emit(note) if loaded is not None else threads.broadcast(note))
        return
    if loaded is not None:
        await loaded.emit(note)
    if loaded is None or ctx.session not in loaded.subscribers:
        await notices.send(ctx.session, note)
