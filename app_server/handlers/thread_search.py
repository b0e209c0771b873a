"""thread/search and thread/searchOccurrences (Codex 0.169), and Codex 0.171's thread/search/stream with its
thread/search/partial batches and the two cancel methods.

This connection answers its requests in order, so a cancel always arrives after the search it names has
finished: it is acknowledged (``{}``, idempotent as in Codex) and the finished search is unaffected.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from app_server.context import HandlerContext
from app_server.handlers import projects
from app_server.protocol import notices
from app_server.protocol import thread_sections as p
from app_server.protocol.base import EmptyObject
from app_server.protocol.responses_threads import ThreadSearchOccurrencesResponse, ThreadSearchResponse
from app_server.session import Session
from app_server.store import parse_thread_id
from app_server.threads import history, search
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InvalidRequest

__all__ = ["occurrences", "search_cancel", "thread_search", "thread_search_stream"]

#: thread/search/stream limits the trimmed search term to this many UTF-8 bytes (Codex 0.171).
STREAM_TERM_LIMIT = 65_536
PARTIAL_BATCH = 10


def _check(method: str, session: Session, params: p.ThreadSearchParams) -> str:
    if method.startswith("thread/search/") and not session.experimental_api:  # 0.171 methods: experimental
        raise InvalidRequest(f"{method} requires experimentalApi capability")
    term = params.search_term.strip()
    if not term:
        raise InvalidRequest(f"{method} requires a non-empty searchTerm")
    if method == "thread/search/stream" and len(term.encode()) > STREAM_TERM_LIMIT:
        raise InvalidRequest(f"searchTerm exceeds {STREAM_TERM_LIMIT} bytes")
    if params.cursor is not None and not params.cursor.isdigit():
        raise InvalidRequest(f"invalid cursor: {params.cursor}")
    return term


async def _search(ctx: HandlerContext, params: p.ThreadSearchParams, term: str,
                  on_match: Callable[[JsonObj], None] | None = None) -> list[JsonObj]:
    threads = ctx.services.threads
    found = await asyncio.to_thread(
        search.search_threads, threads.store, term, archived=bool(params.archived),
        source_kinds=params.source_kinds, direction=params.sort_direction or "desc", on_match=on_match)
    listed = _listed(ctx, found)
    wires = await projects.with_projects(ctx, [result["thread"] for result in listed])
    return [dict(result, thread=wire) for result, wire in zip(listed, wires, strict=True)]


def _listed(ctx: HandlerContext, results: list[JsonObj]) -> list[JsonObj]:
    """Results with their threads as Codex lists them (a loaded one with its live state); on the event loop."""
    threads = ctx.services.threads
    return [dict(result, thread=threads.listed_wire(result["thread"])) for result in results]


def _page(results: list[JsonObj], params: p.ThreadSearchParams) -> ThreadSearchResponse:
    page = search.page(results, params.cursor, params.limit)
    return ThreadSearchResponse(data=page["data"], next_cursor=page["nextCursor"],
                                backwards_cursor=page["backwardsCursor"])


async def thread_search(ctx: HandlerContext, params: p.ThreadSearchParams) -> ThreadSearchResponse:
    term = _check("thread/search", ctx.session, params)
    return _page(await _search(ctx, params, term), params)


async def thread_search_stream(ctx: HandlerContext, params: p.ThreadSearchParams) -> ThreadSearchResponse:
    """Partial batches while scanning (at most one batch per PARTIAL_BATCH matches, first page only), then the
    final page as the response."""
    term = _check("thread/search/stream", ctx.session, params)
    request_id = ctx.session.current_request_id
    loop = asyncio.get_running_loop()
    pending: list[JsonObj] = []
    sent: list[asyncio.Future[None]] = []
    limit = params.limit or search.DEFAULT_LIMIT

    async def send_partial(batch: list[JsonObj]) -> None:
        await notices.send(ctx.session, notices.thread_search_partial(request_id, _listed(ctx, batch)))

    def on_match(result: JsonObj) -> None:  # runs in the worker thread
        pending.append(result)
        if len(pending) >= PARTIAL_BATCH or len(pending) >= limit:
            batch = pending[:]
            pending.clear()
            future = asyncio.run_coroutine_threadsafe(send_partial(batch), loop)
            sent.append(asyncio.wrap_future(future))

    results = await _search(ctx, params, term, on_match if not params.cursor else None)
    if sent:
        await asyncio.gather(*sent)
    if pending and not params.cursor:
        await send_partial(pending)
    return _page(results, params)


async def search_cancel(ctx: HandlerContext, params: p.ThreadSearchCancelParams) -> EmptyObject:
    if not ctx.session.experimental_api:
        raise InvalidRequest("thread/search/cancel requires experimentalApi capability")
    return EmptyObject()


async def occurrences(
    ctx: HandlerContext, params: p.ThreadSearchOccurrencesParams
) -> ThreadSearchOccurrencesResponse:
    thread_id = parse_thread_id(params.thread_id)
    term = params.search_term.strip()
    if not term:
        raise InvalidRequest("thread/searchOccurrences requires a non-empty searchTerm")
    if params.cursor is not None and not params.cursor.isdigit():
        raise InvalidRequest(f"invalid cursor: {params.cursor}")
    turns, _ = await history.thread_turns(ctx.services.threads, thread_id)
    found = search.occurrences(thread_id, turns, term)
    page = search.page(found, params.cursor, params.limit)
    return ThreadSearchOccurrencesResponse(data=page["data"], next_cursor=page["nextCursor"])
