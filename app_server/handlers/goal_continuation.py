"""Starting goal continuation turns: when thread/goal/set leaves an idle thread with an active goal, and
whenever a turn ends with the thread idle afterwards (an idle hook, after queued user submissions), a turn
opens with the hidden continuation message if ``goal_loop.continuation_skip_reason`` finds no reason not to.
The turns' usage is counted toward the goal by the runner (``threads.goal_meter``)."""

from __future__ import annotations

import asyncio
import logging

from app_server.context import HandlerContext
from app_server.store import new_uuid7
from app_server.threads.goal_loop import continuation_message, continuation_skip_reason
from app_server.threads.idle_hooks import GOAL_RANK, add_idle_hook
from app_server.threads.runner import TurnRunner
from app_server.threads.services import TurnServices
from app_server.threads.state import ThreadRuntime, TurnState
from pycodex.json_types import JsonObj

__all__ = ["ContinuationRunner", "arm_goal_loop", "continue_if_idle"]

logger = logging.getLogger(__name__)


class ContinuationRunner(TurnRunner):
    """A turn toward the goal: it opens with the continuation message in the history only (no item)."""

    def __init__(self, *, thread: ThreadRuntime, turn: TurnState, services: TurnServices, opening: JsonObj) -> None:
        super().__init__(thread=thread, turn=turn, services=services)
        self._opening = opening

    async def opening_input(self) -> None:
        """Record the hidden continuation message (Codex shows no userMessage item for it)."""
        await self._record_history([self._opening])


def arm_goal_loop(ctx: HandlerContext, thread: ThreadRuntime) -> None:
    """Continue toward the goal each time a turn of ``thread`` ends with the thread idle."""
    async def after_turn() -> None:
        last = str(thread.turns[-1].get("status")) if thread.turns else None
        await continue_if_idle(ctx, thread, last_turn=last)

    add_idle_hook(thread, "goal", GOAL_RANK, after_turn)


async def continue_if_idle(ctx: HandlerContext, thread: ThreadRuntime, *, last_turn: str | None) -> bool:
    """Start a continuation turn if the goal calls for one now; True when one started."""
    store = thread.services.read_states
    goal = None if store is None else await asyncio.to_thread(store.goal, thread.id)
    reason = continuation_skip_reason(None if goal is None else goal.status, last_turn=last_turn,
                                      idle=thread.active is None, queued=bool(thread.queued),
                                      ephemeral=thread.ephemeral)
    if reason is not None or goal is None:
        logger.debug("no goal continuation for thread %s: %s", thread.id, reason)
        return False
    services = await ctx.services.turn_services(thread, ctx.session)
    if thread.active is not None or thread.queued:  # work arrived while the turn's services were built
        return False
    turn = TurnState(new_uuid7(), inputs=[])
    runner = ContinuationRunner(thread=thread, turn=turn, services=services, opening=continuation_message(goal))
    launch = thread.start_turn(turn, runner, ctx.services.spawn)
    await launch()
    return True
