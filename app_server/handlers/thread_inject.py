"""thread/inject_items: raw Responses API items appended to a loaded thread's model-visible history (and to its
rollout, so a resumed thread still has them). They show in no turn; the next model request sees them."""

from __future__ import annotations

import asyncio

from app_server.context import HandlerContext
from app_server.protocol import thread_sections as p
from app_server.protocol.base import EmptyObject
from app_server.store import parse_thread_id
from app_server.threads import history
from app_server.threads.state import ThreadRuntime
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InvalidRequest

__all__ = ["append_history", "inject_items"]


async def append_history(thread: ThreadRuntime, items: list[JsonObj]) -> None:
    """Add items to a loaded thread's model-visible history outside any turn, and to its rollout."""
    thread.history.extend(items)
    await asyncio.to_thread(thread.writer.response_items, list(items))


async def inject_items(ctx: HandlerContext, params: p.ThreadInjectItemsParams) -> EmptyObject:
    threads = ctx.services.threads
    thread_id = parse_thread_id(params.thread_id)
    await history.require_thread(threads, thread_id)
    if not params.items:
        raise InvalidRequest("items must not be empty")
    for index, item in enumerate(params.items):
        if not isinstance(item, dict) or not isinstance(item.get("type"), str):
            raise InvalidRequest(f"items[{index}] is not a valid response item: missing field `type`")
    thread = threads.loaded.get(thread_id)
    if thread is None:
        raise InvalidRequest(f"thread not loaded: {thread_id}")
    await append_history(thread, list(params.items))
    return EmptyObject()
