"""thread/items/list, thread/items/read and thread/readState/update: paging a thread's items and marking it read."""

from __future__ import annotations

import asyncio

from app_server.context import HandlerContext
from app_server.protocol import notices
from app_server.protocol import thread_history as p
from app_server.store import parse_thread_id
from app_server.store.thread_state import ReadStateConflict
from app_server.threads import history
from pycodex.jsonrpc.errors import InvalidRequest

__all__ = ["items_list", "items_read", "read_state_update"]


async def items_list(ctx: HandlerContext, params: p.ThreadItemsListParams) -> p.ThreadItemsListResponse:
    thread_id = parse_thread_id(params.thread_id)
    turns, materialized = await history.thread_turns(ctx.services.threads, thread_id)
    if not materialized:
        raise history.items_unavailable()
    page = history.items_page(thread_id, history.entries(turns), turn_id=params.turn_id or None,
                              cursor=params.cursor, limit=params.limit, descending=params.sort_direction == "desc")
    return p.ThreadItemsListResponse(data=page["data"], next_cursor=page["nextCursor"],
                                     backwards_cursor=page["backwardsCursor"])


async def items_read(ctx: HandlerContext, params: p.ThreadItemsReadParams) -> p.ThreadItemsReadResponse:
    thread_id = parse_thread_id(params.thread_id)
    turns, _ = await history.thread_turns(ctx.services.threads, thread_id)
    data = history.read_items(history.entries(turns), params.turn_id, params.item_ids)
    return p.ThreadItemsReadResponse(data=data)


async def read_state_update(
    ctx: HandlerContext, params: p.ThreadReadStateUpdateParams
) -> p.ThreadReadStateUpdateResponse:
    services = ctx.services
    thread_id = parse_thread_id(params.thread_id)
    await history.thread_turns(services.threads, thread_id)  # an unknown thread is an error, not a new row
    try:
        state = await asyncio.to_thread(services.thread_state.update, thread_id, params.operation.type,
                                        params.expected_revision)
    except ReadStateConflict as exc:
        raise InvalidRequest("read state changed",
                             data={"reason": "readStateConflict", "readState": exc.current}) from None
    note = notices.thread_read_state_changed(thread_id, state)
    loaded = services.threads.loaded.get(thread_id)
    if loaded is not None:
        ctx.session.after_response(lambda: loaded.emit(note))
    return p.ThreadReadStateUpdateResponse(read_state=state)
