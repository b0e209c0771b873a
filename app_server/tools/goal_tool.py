"""The model's goal tools (get_goal, create_goal, update_goal) on the thread's persisted goal.

They use the same store as thread/goal/* (``ThreadServices.read_states``) and announce changes with the same
``thread/goal/updated`` notification, carrying the turn id. Outputs are pretty JSON as in Codex 0.169:
``{"goal", "remainingTokens", "completionBudgetReport"}``; refusals are plain texts for the model.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

from app_server.protocol import notices
from app_server.store import new_uuid7
from app_server.tools.contracts import ToolOutcome
from pycodex.json_types import JsonObj

if TYPE_CHECKING:
    from app_server.store.thread_state import Goal
    from app_server.threads.sampling import ToolCall
    from app_server.tools.contracts import ToolContext

__all__ = ["GOAL_TOOLS", "handle_goal_call"]

GOAL_TOOLS = frozenset({"get_goal", "create_goal", "update_goal"})
_UPDATABLE = ("complete", "blocked", "paused")
ALREADY_HAS_GOAL = ("cannot create a new goal because this thread already has a goal; "
                    "use update_goal only when the existing goal is complete")


def _response(goal: Goal | None) -> str:
    """Codex's tool answer: the goal, the tokens left of its budget, and a usage report once complete."""
    remaining = None if goal is None or goal.token_budget is None else max(goal.token_budget - goal.tokens_used, 0)
    report = None
    if goal is not None and goal.status == "complete":
        parts = []
        if goal.token_budget is not None:
            parts.append(f"tokens used: {goal.tokens_used} of {goal.token_budget}")
        if goal.time_used_seconds > 0:
            parts.append(f"time used: {goal.time_used_seconds} seconds")
        if parts:
            report = "Goal achieved. Report final budget usage to the user: " + "; ".join(parts) + "."
    body: JsonObj = {"goal": None if goal is None else goal.wire(), "remainingTokens": remaining,
                     "completionBudgetReport": report}
    return json.dumps(body, indent=2)


def _output(call: ToolCall, text: str) -> ToolOutcome:
    return ToolOutcome({"type": "function_call_output", "id": f"fco_{new_uuid7()}", "call_id": call.call_id, "output": text})


async def handle_goal_call(ctx: ToolContext, call: ToolCall) -> ToolOutcome:
    """Answer one goal tool call; a refusal or a bad argument is told to the model as the output text."""
    store = ctx.thread.services.read_states
    thread_id = ctx.thread.id
    if store is None:
        return _output(call, "goals are not available in this thread")
    try:
        args = json.loads(call.arguments or "{}")
    except json.JSONDecodeError as exc:
        return _output(call, f"failed to parse function arguments: {exc}")
    if not isinstance(args, dict):
        return _output(call, "failed to parse function arguments: expected an object")
    if call.name == "get_goal":
        return _output(call, _response(await asyncio.to_thread(store.goal, thread_id)))
    if call.name == "create_goal":
        objective = args.get("objective")
        budget = args.get("token_budget")
        if not isinstance(objective, str) or not objective.strip():
            return _output(call, "failed to parse function arguments: missing field `objective`")
        if budget is not None and (not isinstance(budget, int) or budget <= 0):
            return _output(call, "goal budgets must be positive when provided")
        existing = await asyncio.to_thread(store.goal, thread_id)
        if existing is not None and existing.status != "complete":
            return _output(call, ALREADY_HAS_GOAL)
        if existing is not None:
            await asyncio.to_thread(store.clear_goal, thread_id)
        goal = await asyncio.to_thread(store.set_goal, thread_id, objective=objective.strip(), status="active",
                                       token_budget=budget, budget_given=True)
    else:
        status = args.get("status")
        if status not in _UPDATABLE:
            return _output(call, f"failed to parse function arguments: unknown status `{status}`")
        try:
            goal = await asyncio.to_thread(store.set_goal, thread_id, objective=None, status=str(status),
                                           token_budget=None, budget_given=False)
        except LookupError:
            return _output(call, f"cannot update goal for thread {thread_id}: no goal exists")
    await ctx.thread.emit(notices.thread_goal_updated(thread_id, ctx.turn.id, goal.wire()))
    return _output(call, _response(goal))
