"""Threads as sections show them: thread/list with ``sortKey: section_position`` and the section overlay on a
Thread dict (``section``, ``sectionEnteredAt``)."""

from __future__ import annotations

import asyncio

from app_server.store import ThreadNotFoundError
from app_server.store.thread_sections import SectionNotFound
from app_server.store.thread_state import ThreadStateDb
from app_server.threads.manager import ThreadManager
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InvalidParams, InvalidRequest


def overlay(wire: JsonObj, state: ThreadStateDb) -> JsonObj:
    """``wire`` with the thread's section membership and stored metadata laid over it."""
    member = state.membership(wire["id"])
    meta = state.metadata(wire["id"])
    out = dict(wire, **meta)
    if member is not None:
        out["section"], out["sectionEnteredAt"] = member
    return out


async def section_listing(threads: ThreadManager, state: ThreadStateDb, section_id: str | None) -> JsonObj:
    """The threads of one section in their section order (Codex requires the section filter)."""
    if not section_id:
        raise InvalidRequest("section-position sorting requires a section filter")
    try:
        await asyncio.to_thread(state.section, section_id)
    except SectionNotFound as exc:
        raise InvalidParams(str(exc)) from None
    data = []
    for thread_id in await asyncio.to_thread(state.section_threads, section_id):
        try:
            wire = await asyncio.to_thread(threads.store.read_thread, thread_id)
        except ThreadNotFoundError:
            continue  # deleted elsewhere; the membership row is stale
        data.append(await asyncio.to_thread(overlay, wire, state))
    read_states = await asyncio.to_thread(state.read_states, {t["id"]: None for t in data})
    return {"data": data, "readStates": read_states, "nextCursor": None, "backwardsCursor": None}
