"""thread/timeline/list: one ordered timeline of a thread (turn starts, items, turn ends), read from its
rollout, loaded or not, in Codex 0.169's shapes and paging.

Each entry's ``position`` is the ordinal of the rollout line it comes from (task_started, item_completed,
task_complete / turn_aborted); entries sort by (position, kind, id) with kind 0 turnStarted, 1 item,
2 realtime, 3 turnCompleted, as Codex's store orders them. A page is the newest ``limit`` entries before
the cursor (25 by default, 1 to 100), listed oldest first; ``nextCursor`` names the page's oldest entry,
``{"threadId","position","kind","id"}``, and the next page starts strictly before it. pycodex runs no realtime
session, so no realtime entry is ever written and ``activeRealtimeSessionAtPageStart`` is always null.
A loaded thread with no turn yet, or an unknown one, gets Codex's -32601 "not supported yet".
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from app_server.context import HandlerContext
from app_server.handlers.paging import page_size
from app_server.protocol import thread_experimental as p
from app_server.store import parse_thread_id
from app_server.store import records as r
from app_server.store.codex_format import TURNS_ROLLED_BACK
from app_server.store.rollout_file import read_records
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InvalidRequest, MethodNotFound

__all__ = ["timeline_list"]

Key = tuple[int, int, str]
_KIND = {"turnStarted": 0, "item": 1, "realtime": 2, "turnCompleted": 3}


def _key(entry: JsonObj) -> Key:
    kind = _KIND[str(entry["type"])]
    ident = entry["item"]["id"] if kind in (1, 2) else entry["turnId"]
    return int(entry["position"]), kind, str(ident)


def timeline(records: list[r.Record]) -> list[JsonObj]:
    """Every timeline entry of a rollout's records, in (position, kind, id) order; the entries of turns a
    rollback dropped are left out."""
    by_turn: dict[str, list[JsonObj]] = {}
    order: list[str] = []
    started_at: dict[str, object] = {}
    for rec in records:
        payload = rec.payload
        turn_id = payload.get("turnId")
        if rec.type == r.TURN_STARTED and isinstance(turn_id, str):
            started_at[turn_id] = payload.get("startedAt")
            order.append(turn_id)
            by_turn.setdefault(turn_id, []).append(
                {"type": "turnStarted", "position": rec.ordinal, "turnId": turn_id,
                 "startedAt": payload.get("startedAt")})
        elif rec.type == r.ITEM_COMPLETED and isinstance(turn_id, str) and isinstance(payload.get("item"), dict):
            by_turn.setdefault(turn_id, []).append(
                {"type": "item", "position": rec.ordinal, "turnId": turn_id, "item": payload["item"]})
        elif rec.type == r.TURN_ENDED and isinstance(turn_id, str):
            by_turn.setdefault(turn_id, []).append({
                "type": "turnCompleted", "position": rec.ordinal, "turnId": turn_id,
                "status": payload.get("status"), "error": payload.get("error"),
                "startedAt": started_at.get(turn_id), "completedAt": payload.get("completedAt"),
                "durationMs": payload.get("durationMs"),
            })
        elif rec.type in (r.TURNS_REVERTED, TURNS_ROLLED_BACK):
            _drop_reverted(payload, order, by_turn)
    entries = [entry for turn_entries in by_turn.values() for entry in turn_entries]
    return sorted(entries, key=_key)


def _drop_reverted(payload: JsonObj, order: list[str], by_turn: dict[str, list[JsonObj]]) -> None:
    before = payload.get("beforeTurnId")
    count = payload.get("numTurns")
    if isinstance(before, str) and before in order:
        dropped = order[order.index(before):]
    elif isinstance(count, int) and count > 0:
        dropped = order[-count:]
    else:
        return
    for turn_id in dropped:
        order.remove(turn_id)
        by_turn.pop(turn_id, None)


def _cursor_key(thread_id: str, cursor: str) -> Key:
    try:
        data = json.loads(cursor)
        key = (data["position"], data["kind"], data["id"])
        if not isinstance(data["threadId"], str) or not isinstance(key[0], int) or key[0] < 0 \
                or not isinstance(key[1], int) or not isinstance(key[2], str):
            raise ValueError("bad cursor")
        owner = parse_thread_id(data["threadId"])
    except (ValueError, KeyError, TypeError):
        raise InvalidRequest("invalid thread timeline cursor") from None
    if owner != thread_id:
        raise InvalidRequest("thread timeline cursor belongs to another thread")
    return key


def page(thread_id: str, entries: list[JsonObj], cursor: str | None, limit: int | None) -> p.ThreadTimelineListResponse:
    """The page of ``entries`` before ``cursor`` (all of them without one), at most ``limit`` long."""
    size = page_size(limit)
    if cursor is not None:
        bound = _cursor_key(thread_id, cursor)
        entries = [e for e in entries if _key(e) < bound]
    chosen = entries[-size:]
    next_cursor = None
    if len(entries) > size and chosen:
        position, kind, ident = _key(chosen[0])
        next_cursor = json.dumps({"threadId": thread_id, "position": position, "kind": kind, "id": ident},
                                 separators=(",", ":"))
    return p.ThreadTimelineListResponse(data=chosen, next_cursor=next_cursor)


async def timeline_list(ctx: HandlerContext, params: p.ThreadTimelineListParams) -> p.ThreadTimelineListResponse:
    thread_id = parse_thread_id(params.thread_id)
    loaded = ctx.services.threads.loaded.get(thread_id)
    unmaterialized = loaded is not None and not loaded.turns and loaded.active is None
    path: Path | None = None if unmaterialized else await asyncio.to_thread(ctx.services.store.find_rollout,
                                                                             thread_id)
    if path is None:  # Codex's answer for a thread with no turn on disk yet, and for an unknown one
        raise MethodNotFound("thread/timeline/list is not supported yet")
    records = await asyncio.to_thread(read_records, path)
    return page(thread_id, timeline(records), params.cursor, params.limit)
