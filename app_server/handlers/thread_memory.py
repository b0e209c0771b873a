"""thread/memoryMode/set, thread/memory/read, memory/status and memory/reset. pycodex keeps no cross-thread memories, so a thread's memory
summary is always absent (Codex answers null too when there is none); the mode is stored per thread so a
client reads back what it set and a future memory pipeline can honour it."""

from __future__ import annotations

import asyncio

from app_server.context import HandlerContext
from app_server.protocol import responses_named as rn
from app_server.protocol import thread_sections as p
from app_server.protocol.responses_threads import MemoryStatusResponse, ThreadMemoryReadResponse
from app_server.protocol.thread_requests import MemoryStatusParams
from app_server.store import parse_thread_id
from app_server.threads import history
from pycodex.jsonrpc.errors import InvalidRequest

__all__ = ["memory_mode_set", "memory_read", "memory_reset", "memory_status"]


async def memory_mode_set(
    ctx: HandlerContext, params: p.ThreadMemoryModeSetParams
) -> rn.ThreadMemoryModeSetResponse:
    services = ctx.services
    thread_id = parse_thread_id(params.thread_id)
    try:
        await history.require_thread(services.threads, thread_id)
    except InvalidRequest:
        raise InvalidRequest(f"no rollout found for thread id {thread_id}") from None
    await asyncio.to_thread(services.thread_state.set_memory_mode, thread_id, params.mode)
    return rn.ThreadMemoryModeSetResponse()


async def memory_read(ctx: HandlerContext, params: p.ThreadMemoryReadParams) -> ThreadMemoryReadResponse:
    services = ctx.services
    thread_id = parse_thread_id(params.thread_id)
    await history.require_thread(services.threads, thread_id)
    return ThreadMemoryReadResponse(summary=None)


async def memory_status(ctx: HandlerContext, params: MemoryStatusParams) -> MemoryStatusResponse:
    """No memories are consolidated; Codex with none reports the (empty) v2 store as ready."""
    return MemoryStatusResponse(v2_consolidated_threads=0, v2_ready=True)


async def memory_reset(ctx: HandlerContext, params: None) -> rn.MemoryResetResponse:
    return rn.MemoryResetResponse()  # nothing is kept, so nothing to clear
