"""thread/goal/get, set and clear: one persisted goal per thread, announced with thread/goal/* notifications.

Codex also starts a continuation turn when a goal becomes active on an idle thread; pycodex only stores and
announces the goal (the client's next turn sees it through thread/goal/get).
"""

from __future__ import annotations

import asyncio

from app_server.context import HandlerContext
from app_server.handlers.announce import announce
from app_server.protocol import notices
from app_server.protocol import thread_history as p
from app_server.protocol.base import to_wire
from app_server.store import parse_thread_id
from app_server.threads import history
from pycodex.jsonrpc.errors import InvalidRequest

__all__ = ["goal_clear", "goal_get", "goal_set"]


async def goal_get(ctx: HandlerContext, params: p.ThreadGoalGetParams) -> p.ThreadGoalGetResponse:
    services = ctx.services
    thread_id = parse_thread_id(params.thread_id)
    await history.require_thread(services.threads, thread_id)
    goal = await asyncio.to_thread(services.thread_state.goal, thread_id)
    return p.ThreadGoalGetResponse(goal=None if goal is None else p.ThreadGoal.model_validate(goal.wire()))


async def goal_set(ctx: HandlerContext, params: p.ThreadGoalSetParams) -> p.ThreadGoalSetResponse:
    services = ctx.services
    thread_id = parse_thread_id(params.thread_id)
    await history.require_thread(services.threads, thread_id)
    try:
        goal = await asyncio.to_thread(
            services.thread_state.set_goal, thread_id, objective=params.objective, status=params.status,
            token_budget=params.token_budget, budget_given="token_budget" in params.model_fields_set,
        )
    except LookupError:
        raise InvalidRequest(f"cannot update goal for thread {thread_id}: no goal exists") from None
    wire = p.ThreadGoal.model_validate(goal.wire())
    note = notices.thread_goal_updated(thread_id, None, to_wire(wire))
    ctx.session.after_response(lambda: announce(ctx, thread_id, note))
    return p.ThreadGoalSetResponse(goal=wire)


async def goal_clear(ctx: HandlerContext, params: p.ThreadGoalClearParams) -> p.ThreadGoalClearResponse:
    services = ctx.services
    thread_id = parse_thread_id(params.thread_id)
    await history.require_thread(services.threads, thread_id)
    cleared = await asyncio.to_thread(services.thread_state.clear_goal, thread_id)
    if cleared:
        ctx.session.after_response(lambda: announce(ctx, thread_id, notices.thread_goal_cleared(thread_id)))
    return p.ThreadGoalClearResponse(cleared=cleared)
