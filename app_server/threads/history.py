"""A thread's history as pages of items (thread/items/list, thread/items/read), loaded or stored alike.

Items are numbered across the whole thread in stored order (1-based); a cursor names one of those ordinals as
its anchor, in the JSON shape Codex uses, so a client can keep a cursor across calls and reverse direction
with ``backwardsCursor`` (which includes its anchor) as with turns.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

from app_server.store import RolloutCorruptError, ThreadNotFoundError
from app_server.threads.contracts import ThreadSettings
from app_server.threads.manager import ThreadManager
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InternalError, InvalidRequest, MethodNotFound

#: Codex's page size for thread/turns/list when the client gives none.
DEFAULT_TURNS_PAGE = 25
MAX_ITEMS_READ = 100
ITEMS_SCOPE = "itemsByCreatedAtOrdinal"


@dataclass(frozen=True, slots=True)
class Entry:
    """One item of a thread's history, numbered in order across all its turns (``ordinal`` starts at 1)."""

    ordinal: int
    turn_id: str
    item: JsonObj

    def wire(self) -> JsonObj:
        """The entry as the history methods show it: the item, its turn and its start and end times."""
        return {"turnId": self.turn_id, "item": self.item, "startedAtMs": self.item.get("startedAtMs"),
                "completedAtMs": self.item.get("completedAtMs")}


async def thread_turns(threads: ThreadManager, thread_id: str) -> tuple[list[JsonObj], bool]:
    """(every turn with full items, whether the thread is materialized). Unknown thread: -32600 as Codex."""
    loaded = threads.loaded.get(thread_id)
    if loaded is not None:
        turns = threads.turns_wire(loaded)
        return turns, bool(turns) or loaded.active is not None
    try:
        stored = await asyncio.to_thread(threads.store.load_thread, thread_id)
    except ThreadNotFoundError:
        raise InvalidRequest(f"thread not found: {thread_id}") from None
    except RolloutCorruptError as exc:
        raise InternalError(f"failed to read thread: {exc}") from None
    return stored.turns, True


def not_materialized(thread_id: str, method: str) -> InvalidRequest:
    """The error for a history method on a thread that has no user message yet (Codex's wording)."""
    return InvalidRequest(
        f"thread {thread_id} is not materialized yet; {method} is unavailable before first user message"
    )


def entries(turns: list[JsonObj]) -> list[Entry]:
    """Every item of ``turns``, in order, as numbered entries."""
    out: list[Entry] = []
    for turn in turns:
        for item in turn.get("items") or []:
            out.append(Entry(len(out) + 1, str(turn["id"]), item))
    return out


def _cursor(thread_id: str, ordinal: int, *, include_anchor: bool) -> str:
    return json.dumps({"requestedThreadId": thread_id, "rolloutOrdinal": ordinal, "includeAnchor": include_anchor,
                       "scope": {"kind": ITEMS_SCOPE}}, separators=(",", ":"))


def _decode(thread_id: str, cursor: str) -> tuple[int, bool]:
    try:
        data = json.loads(cursor)
        if data["requestedThreadId"] != thread_id or data["scope"]["kind"] != ITEMS_SCOPE:
            raise ValueError("cursor of another thread or scope")
        ordinal, include = data["rolloutOrdinal"], data["includeAnchor"]
        if not isinstance(ordinal, int) or not isinstance(include, bool):
            raise ValueError("bad anchor")
    except (ValueError, KeyError, TypeError):
        raise InvalidRequest(f"invalid cursor: {cursor}") from None
    return ordinal, include


def items_page(thread_id: str, all_entries: list[Entry], *, turn_id: str | None, cursor: object,
               limit: int | None, descending: bool) -> JsonObj:
    """One page. ``cursor`` is a string cursor, an item anchor (``{"itemId"}``; needs ``turn_id``) or None."""
    pool = [e for e in all_entries if turn_id is None or e.turn_id == turn_id]
    if descending:
        pool.reverse()
    start = 0
    if isinstance(cursor, str) and cursor:
        ordinal, include = _decode(thread_id, cursor)
        positions = [i for i, e in enumerate(pool) if (e.ordinal >= ordinal if not descending else e.ordinal <= ordinal)]
        start = positions[0] if positions else len(pool)
        if start < len(pool) and pool[start].ordinal == ordinal and not include:
            start += 1
    elif cursor is not None and not isinstance(cursor, str):
        if not turn_id:
            raise InvalidRequest("an item anchor cursor requires a non-empty turnId")
        ids = [e.item.get("id") for e in pool]
        anchor = getattr(cursor, "item_id", None)
        start = ids.index(anchor) + 1 if anchor in ids else len(pool)
    size = limit if limit else max(len(pool) - start, 1)
    page = pool[start : start + size]
    more = start + size < len(pool)
    return {
        "data": [e.wire() for e in page],
        "nextCursor": _cursor(thread_id, page[-1].ordinal, include_anchor=False) if page and more else None,
        "backwardsCursor": _cursor(thread_id, page[0].ordinal, include_anchor=True) if page else None,
    }


def read_items(all_entries: list[Entry], turn_id: str, item_ids: list[str]) -> list[JsonObj]:
    """The named items of one turn in stored order; unknown ids are left out (as Codex does)."""
    if not 1 <= len(item_ids) <= MAX_ITEMS_READ:
        raise InvalidRequest(f"itemIds must contain 1 to {MAX_ITEMS_READ} IDs")
    wanted = set(item_ids)
    return [e.wire() for e in all_entries if e.turn_id == turn_id and e.item.get("id") in wanted]


def items_unavailable() -> MethodNotFound:
    """Codex's answer to thread/items/list on a thread with no user message yet."""
    return MethodNotFound("thread/items/list is not supported yet")


async def require_thread(threads: ThreadManager, thread_id: str) -> None:
    """-32600 "thread not found" unless the thread is loaded or has a rollout (Codex's wording)."""
    if thread_id in threads.loaded:
        return
    if await asyncio.to_thread(threads.store.find_rollout, thread_id) is None:
        raise InvalidRequest(f"thread not found: {thread_id}")


def resume_fields(
    response: JsonObj, thread_id: str, turns: list[JsonObj], settings: ThreadSettings
) -> JsonObj:
    """A thread/resume response: the settings response plus the collaboration mode and the cursors a
    paginated client hydrates backwards from, in Codex's key order."""
    out: JsonObj = {}
    for key, value in response.items():
        if key == "multiAgentMode":
            out["collaborationMode"] = {"mode": "default", "settings": {
                "model": settings.model, "reasoning_effort": settings.effort,
                "developer_instructions": settings.developer_instructions}}
        out[key] = value
    all_entries = entries(turns)
    out["initialTurnsPage"] = None
    out["turnsBackwardsCursor"] = json.dumps(
        {"requestedThreadId": thread_id, "turnId": turns[-1]["id"], "includeAnchor": True,
         "scope": {"kind": "turns"}}, separators=(",", ":")) if turns else None
    out["itemsBackwardsCursor"] = (
        _cursor(thread_id, all_entries[-1].ordinal, include_anchor=True) if all_entries else None
    )
    return out


HYDRATION_READ = ("Full-history hydration is deprecated for paginated threads; omit `includeTurns` or set it to "
                  "`false`, then page with `thread/turns/list` and `thread/items/list`.")
HYDRATION_RESUME = ("Full-history hydration is deprecated for paginated threads; use `excludeTurns: true`, then "
                    "page with `thread/turns/list` and `thread/items/list`.")
