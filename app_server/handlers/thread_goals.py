"""thread/goal/get, set and clear: one persisted goal per thread, announced with thread/goal/* notifications.

As in Codex 0.169, a goal that thread/goal/set leaves active on a loaded, idle thread starts a continuation
turn at once, and every turn that ends with the goal still active starts the next one
(``handlers.goal_continuation``; the rules are ``threads.goal_loop``). Pausing or clearing the goal stops the
loop after the running turn; the turns' tokens and time are added to the goal (``threads.goal_meter``).
"""

from __future__ import annotations

import asyncio

from app_server.context import HandlerContext
from app_server.handlers.announce import announce
from app_server.handlers.goal_continuation import arm_goal_loop, continue_if_idle
from app_server.protocol import notices
from app_server.protocol import thread_history as p
from app_server.protocol.base import to_wire
from app_server.store import parse_thread_id
from app_server.threads import history
from pycodex.jsonrpc.errors import InvalidRequest

__all__ = ["goal_clear", "goal_get", "goal_set"]


async def _require_goal_thread(ctx: HandlerContext, thread_id: str) -> None:
    """The thread exists and keeps goals: an ephemeral one does not (Codex's words, for get, set and clear)."""
    threads = ctx.services.threads
    await history.require_thread(threads, thread_id)
    loaded = threads.loaded.get(thread_id)
    if loaded is not None and loaded.ephemeral:
        raise InvalidRequest(f"ephemeral thread does not support goals: {thread_id}")


async def goal_get(ctx: HandlerContext, params: p.ThreadGoalGetParams) -> p.ThreadGoalGetResponse:
    services = ctx.services
    thread_id = parse_thread_id(params.thread_id)
    await _require_goal_thread(ctx, thread_id)
    goal = await asyncio.to_thread(services.thread_state.goal, thread_id)
    return p.ThreadGoalGetResponse(goal=None if goal is None else p.ThreadGoal.model_validate(goal.wire()))


async def goal_set(ctx: HandlerContext, params: p.ThreadGoalSetParams) -> p.ThreadGoalSetResponse:
    services = ctx.services
    thread_id = parse_thread_id(params.thread_id)
    await _require_goal_thread(ctx, thread_id)
    try:
        goal = await asyncio.to_thread(
            services.thread_state.set_goal, thread_id, objective=params.objective, status=params.status,
            token_budget=params.token_budget, budget_given="token_budget" in params.model_fields_set,
        )
    except LookupError:
        raise InvalidRequest(f"cannot update goal for thread {thread_id}: no goal exists") from None
    wire = p.ThreadGoal.model_validate(goal.wire())
    note = notices.thread_goal_updated(thread_id, None, to_wire(wire))

    async def announce_and_continue() -> None:
        await announce(ctx, thread_id, note)
        thread = services.threads.loaded.get(thread_id)
        if thread is not None:  # armed whatever the status: a goal made active later continues too
            arm_goal_loop(ctx, thread)
            await continue_if_idle(ctx, thread, last_turn=None)

    ctx.session.after_response(announce_and_continue)
    return p.ThreadGoalSetResponse(goal=wire)


async def goal_clear(ctx: HandlerContext, params: p.ThreadGoalClearParams) -> p.ThreadGoalClearResponse:
    services = ctx.services
    thread_id = parse_thread_id(params.thread_id)
    await _require_goal_thread(ctx, thread_id)
    cleared = await asyncio.to_thread(services.thread_state.clear_goal, thread_id)
    if cleared:
        ctx.session.after_response(lambda: announce(ctx, thread_id, notices.thread_goal_cleared(thread_id)))
    return p.ThreadGoalClearResponse(cleared=cleared)
