"""thread/backgroundTerminals/list, clean and terminate: the thread's exec sessions still running."""

from __future__ import annotations

from app_server.context import HandlerContext
from app_server.protocol import responses_named as rn
from app_server.protocol import thread_history as p
from app_server.store import parse_thread_id
from app_server.threads import history
from app_server.tools.unified_exec import UnifiedExec
from pycodex.jsonrpc.errors import InvalidRequest

__all__ = ["terminals_clean", "terminals_list", "terminals_terminate"]


async def _sessions(ctx: HandlerContext, thread_id: str) -> UnifiedExec | None:
    threads = ctx.services.threads
    thread_id = parse_thread_id(thread_id)
    await history.require_thread(threads, thread_id)
    loaded = threads.loaded.get(thread_id)
    return None if loaded is None else loaded.services.exec_sessions


async def terminals_list(
    ctx: HandlerContext, params: p.BackgroundTerminalsListParams
) -> rn.ThreadBackgroundTerminalsListResponse:
    sessions = await _sessions(ctx, params.thread_id)
    data = []
    for running in sessions.running() if sessions is not None else []:
        item_id, command, cwd = running.label or ("", "", "")
        pid = running.process.pid
        data.append(p.BackgroundTerminal(process_id=str(running.id), item_id=item_id, command=command, cwd=cwd,
                                         os_pid=int(pid) if pid is not None and pid.isdigit() else None))
    start = 0
    if params.cursor:
        if not params.cursor.isdigit():
            raise InvalidRequest(f"invalid cursor: {params.cursor}")
        start = int(params.cursor)
    size = params.limit or len(data) or 1
    more = start + size < len(data)
    return rn.ThreadBackgroundTerminalsListResponse(data=data[start : start + size],
                                             next_cursor=str(start + size) if more else None)


async def terminals_clean(
    ctx: HandlerContext, params: p.BackgroundTerminalsCleanParams
) -> rn.ThreadBackgroundTerminalsCleanResponse:
    sessions = await _sessions(ctx, params.thread_id)
    if sessions is not None:
        await sessions.close_all()
    return rn.ThreadBackgroundTerminalsCleanResponse()


async def terminals_terminate(
    ctx: HandlerContext, params: p.BackgroundTerminalsTerminateParams
) -> rn.ThreadBackgroundTerminalsTerminateResponse:
    if not params.process_id.isdigit():
        raise InvalidRequest("invalid background terminal process id: invalid digit found in string")
    sessions = await _sessions(ctx, params.thread_id)
    terminated = sessions is not None and await sessions.terminate(int(params.process_id))
    return rn.ThreadBackgroundTerminalsTerminateResponse(terminated=terminated)
