"""fuzzyFileSearch and its sessions. Listing a tree is blocking file-system work, so it runs in a
worker thread; each connection has its own sessions, dropped when it closes. The search modules (and
pathspec) are imported on first use, not at server start-up."""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING

from app_server.context import HandlerContext
from app_server.lazy import LazyModule
from app_server.protocol import notices
from app_server.protocol import responses_fs as rf
from app_server.protocol import settings as s
from app_server.protocol.base import to_wire
from app_server.session import Deferred
from pycodex.json_types import JsonObj

if TYPE_CHECKING:
    from app_server.search import fuzzy as search_fuzzy
    from app_server.search.fuzzy import FuzzySessions
else:
    search_fuzzy = LazyModule("app_server.search.fuzzy")

__all__ = ["search", "session_start", "session_stop", "session_update"]


def _sessions(ctx: HandlerContext) -> FuzzySessions:
    """This connection's sessions (created on first use, forgotten when the connection closes)."""
    FuzzySessions = search_fuzzy.FuzzySessions

    per_connection = ctx.services.fuzzy_sessions
    found = per_connection.get(ctx.session.id)
    if found is None:
        found = per_connection[ctx.session.id] = FuzzySessions()
        ctx.session.on_close.append(lambda: per_connection.pop(ctx.session.id, None))
    return found


async def search(ctx: HandlerContext, params: s.FuzzyFileSearchParams) -> Deferred:
    """Answered when the search ends, the connection serving other requests meanwhile (as Codex). A later
    search with the same `cancellationToken` (on this connection) cancels this one, which then answers
    with no files, as Codex does."""
    fuzzy_file_search = search_fuzzy.fuzzy_file_search

    token = params.cancellation_token
    sessions = _sessions(ctx)
    flag = sessions.begin_search(token) if token is not None else threading.Event()

    async def run() -> JsonObj:
        try:
            files = await asyncio.to_thread(fuzzy_file_search, params.query, params.roots, cancelled=flag.is_set)
        finally:
            if token is not None:
                sessions.end_search(token, flag)
        found = [] if flag.is_set() else [rf.FuzzyFileSearchResult.model_validate(f) for f in files]
        return to_wire(rf.FuzzyFileSearchResponse(files=found))

    return Deferred(run())


async def session_start(
    ctx: HandlerContext, params: s.FuzzySessionStartParams
) -> rf.FuzzyFileSearchSessionStartResponse:
    _sessions(ctx).start(params.session_id, params.roots)
    return rf.FuzzyFileSearchSessionStartResponse()


async def session_update(
    ctx: HandlerContext, params: s.FuzzySessionUpdateParams
) -> rf.FuzzyFileSearchSessionUpdateResponse:
    UPDATED = search_fuzzy.UPDATED

    notes = await asyncio.to_thread(_sessions(ctx).update, params.session_id, params.query)

    async def send_results() -> None:  # Codex answers `{}` first, then sends the results
        for method, body in notes:
            notice = (notices.fuzzy_session_updated(body["sessionId"], body["query"], body["files"])
                      if method == UPDATED else notices.fuzzy_session_completed(body["sessionId"]))
            await notices.send(ctx.session, notice)

    ctx.session.after_response(send_results)
    return rf.FuzzyFileSearchSessionUpdateResponse()


async def session_stop(
    ctx: HandlerContext, params: s.FuzzySessionStopParams
) -> rf.FuzzyFileSearchSessionStopResponse:
    _sessions(ctx).stop(params.session_id)
    return rf.FuzzyFileSearchSessionStopResponse()
