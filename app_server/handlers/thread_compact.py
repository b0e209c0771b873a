"""thread/compact/start: run a compaction turn on a loaded thread (app_server/threads/compaction.py).

Codex answers ``{}`` at once and reports the turn through notifications only."""

from __future__ import annotations

from app_server.context import HandlerContext
from app_server.protocol import responses_named as rn
from app_server.protocol.thread_requests import ThreadCompactStartParams
from app_server.store import new_uuid7
from app_server.threads.compaction import CompactionRunner
from app_server.threads.state import TurnState
from pycodex.jsonrpc.errors import InvalidRequest

__all__ = ["ThreadCompactStartParams", "compact_start"]


async def compact_start(
    ctx: HandlerContext, params: ThreadCompactStartParams
) -> rn.ThreadCompactStartResponse:
    services = ctx.services
    thread = services.threads.get_loaded(params.thread_id)
    if thread.active is not None:
        raise InvalidRequest(f"thread {thread.id} already has an active turn")
    services.threads.subscribe(thread, ctx.session)
    turn = TurnState(new_uuid7(), inputs=[])
    turn_services = await services.turn_services(thread, ctx.session)
    runner = CompactionRunner(thread=thread, turn=turn, services=turn_services)
    ctx.session.after_response(thread.start_turn(turn, runner, services.spawn))
    return rn.ThreadCompactStartResponse()
