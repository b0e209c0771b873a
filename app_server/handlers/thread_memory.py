"""thread/memoryMode/set and thread/memory/read. pycodex keeps no cross-thread memories, so a thread's memory
summary is always absent (Codex answers null too when there is none); the mode is stored per thread so a
client reads back what it set and a future memory pipeline can honour it."""

from __future__ import annotations

import asyncio

from app_server.connection import Session
from app_server.handlers.table import RouteSpec, app_of
from app_server.protocol import thread_sections as p
from app_server.protocol.base import EmptyObject
from app_server.store import parse_thread_id
from app_server.threads import history
from pycodex.jsonrpc.errors import InvalidRequest

__all__ = ["ROUTES"]


async def memory_mode_set(session: Session, params: p.ThreadMemoryModeSetParams) -> EmptyObject:
    app = app_of(session)
    thread_id = parse_thread_id(params.thread_id)
    try:
        await history.require_thread(app.threads, thread_id)
    except InvalidRequest:
        raise InvalidRequest(f"no rollout found for thread id {thread_id}") from None
    await asyncio.to_thread(app.thread_state.set_memory_mode, thread_id, params.mode)
    return EmptyObject()


async def memory_read(session: Session, params: p.ThreadMemoryReadParams) -> dict[str, str | None]:
    app = app_of(session)
    thread_id = parse_thread_id(params.thread_id)
    await history.require_thread(app.threads, thread_id)
    return {"summary": None}


ROUTES = (
    RouteSpec("thread/memoryMode/set", p.ThreadMemoryModeSetParams, memory_mode_set,
              experimental=True),
    RouteSpec("thread/memory/read", p.ThreadMemoryReadParams, memory_read, experimental=True),
)
