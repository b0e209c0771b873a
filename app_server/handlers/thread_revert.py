"""thread/revert: drop a turn and every later one from a loaded thread, and put the model history back to
what it was when that turn started. pycodex records the revert in the same rollout (Codex's ``thread_rolled_back``
record and the replacement history, app_server/store/reconstruct.py) where Codex rewrites a new rollout
file; the wire is Codex 0.169's: the thread goes notLoaded then idle, the answer is the thread without
turns plus the backwards cursors, and ``thread/reverted`` follows. Files the reverted turns changed are
left as they are (Codex restores them only from snapshots it did not take here either)."""

from __future__ import annotations

import asyncio

from app_server.context import HandlerContext
from app_server.protocol import notices
from app_server.protocol.responses_threads import ThreadRevertResponse
from app_server.protocol.thread_requests import ThreadRevertParams
from app_server.store.reconstruct import history_before_turn
from app_server.store.rollout_file import read_records
from app_server.threads.history import resume_fields
from pycodex.jsonrpc.errors import InvalidRequest

__all__ = ["ThreadRevertParams", "revert"]

#: How long a running turn gets to record its end before the revert goes ahead.
INTERRUPT_TIMEOUT_S = 10.0


async def revert(ctx: HandlerContext, params: ThreadRevertParams) -> ThreadRevertResponse:
    services = ctx.services
    thread = services.threads.get_loaded(params.thread_id)
    await thread.interrupt_and_wait(INTERRUPT_TIMEOUT_S)
    ids = [t["id"] for t in thread.turns]
    if params.before_turn_id not in ids:
        raise InvalidRequest(f"turn not found: {params.before_turn_id}")
    path = await asyncio.to_thread(services.threads.store.find_rollout, thread.id)
    records = await asyncio.to_thread(read_records, path) if path is not None else []
    replacement = history_before_turn(records, params.before_turn_id) if records else None
    if replacement is None:
        raise InvalidRequest(f"turn not found: {params.before_turn_id}")
    await thread.emit(notices.thread_status_changed(thread.id, {"type": "notLoaded"}))
    dropped = len(ids) - ids.index(params.before_turn_id)
    await asyncio.to_thread(thread.writer.turns_reverted, params.before_turn_id, replacement, num_turns=dropped)
    thread.turns[:] = thread.turns[:ids.index(params.before_turn_id)]
    thread.history[:] = replacement
    thread.context_seen.clear()
    thread.model_seen = thread.settings.model
    await thread.emit_status()
    cursors = resume_fields({}, thread.id, thread.turns, thread.settings)

    async def announce() -> None:
        await thread.emit(notices.thread_reverted(thread.id))

    ctx.session.after_response(announce)
    return ThreadRevertResponse(thread=services.threads.thread_wire(thread, include_turns=False),
                                turns_backwards_cursor=cursors["turnsBackwardsCursor"],
                                items_backwards_cursor=cursors["itemsBackwardsCursor"])
