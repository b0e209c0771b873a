"""What one turn spends toward the thread's goal: tokens from the turn's usage and seconds of the turn,
added to the persisted goal after each model response and when the turn ends, each change announced with
``thread/goal/updated`` (carrying the turn id), as Codex 0.169 does.

Tokens count only for a goal that was ``active`` or ``budgetLimited`` when the previous response ended (or
the turn started): spending before a goal exists or while it is paused counts for nothing, and the
response that completes a goal (the model's update_goal) still counts toward it. A turn that fails stops
an active goal (``goal_loop.status_after_error``).

Seconds are counted while a turn runs. Codex's goal clock also runs between turns while the goal stays
active (an idle gap after an interrupt counts there, not here).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time

from app_server.protocol import notices
from app_server.store.thread_state import Goal, ThreadStateDb
from app_server.threads import goal_loop
from app_server.threads.lifecycle import TurnEvent
from app_server.threads.state import ThreadRuntime
from pycodex.json_types import JsonObj

__all__ = ["GoalMeter"]

logger = logging.getLogger(__name__)

#: The same goal as before: a new objective or a goal created again starts counting afresh.
_Identity = tuple[int, str]


def _identity(goal: Goal) -> _Identity:
    return goal.created_at, goal.objective


class GoalMeter:
    """Counts one turn toward the goal; the runner calls ``start``, ``response_done`` and ``turn_ended``."""

    def __init__(self, thread: ThreadRuntime, turn_id: str) -> None:
        self._thread = thread
        self._turn_id = turn_id
        self._baseline: JsonObj = dict(thread.total_usage)
        self._tracked: _Identity | None = None
        self._mark = time.monotonic()

    def _store(self) -> ThreadStateDb | None:
        thread = self._thread
        return None if thread.ephemeral else thread.services.read_states

    async def start(self) -> None:
        """Begin counting from here if the thread has a goal to count toward."""
        store = self._store()
        try:
            goal = None if store is None else await asyncio.to_thread(store.goal, self._thread.id)
        except sqlite3.Error:
            logger.exception("could not read the goal of thread %s", self._thread.id)
            goal = None
        self._restart(goal)

    def _restart(self, goal: Goal | None) -> None:
        self._baseline = dict(self._thread.total_usage)
        self._mark = time.monotonic()
        self._tracked = _identity(goal) if goal is not None and goal.status in goal_loop.ACCOUNTABLE else None

    def _seconds(self) -> int:
        # Whole seconds, keeping the fraction for the next count (as Codex's wall clock does).
        seconds = int(time.monotonic() - self._mark)
        self._mark += seconds
        return seconds

    async def _account(self) -> tuple[Goal | None, Goal | None]:
        """Add what was spent since the last count; (the goal as it is now, the goal before the count).
        A database error costs the count, never the turn."""
        try:
            return await self._count()
        except sqlite3.Error:
            logger.exception("could not count turn %s toward the goal of thread %s", self._turn_id, self._thread.id)
            return None, None

    async def _count(self) -> tuple[Goal | None, Goal | None]:
        store = self._store()
        if store is None:
            return None, None
        current = await asyncio.to_thread(store.goal, self._thread.id)
        if current is None or self._tracked != _identity(current) or current.status not in (
                *goal_loop.ACCOUNTABLE, "complete"):
            self._restart(current)  # a new, re-activated, paused or cleared goal: count from here on
            return current, current
        tokens = goal_loop.token_delta(self._baseline, self._thread.total_usage)
        self._baseline = dict(self._thread.total_usage)
        updated = await asyncio.to_thread(store.account_goal, self._thread.id, tokens=tokens,
                                          seconds=self._seconds(), statuses=(*goal_loop.ACCOUNTABLE, "complete"))
        if current.status == "complete":
            self._tracked = None  # the response that completed it was the last to count
        if updated is None:
            return current, current
        await self._thread.emit(notices.thread_goal_updated(self._thread.id, self._turn_id, updated.wire()))
        return updated, current

    async def response_done(self, *, mid_work: bool) -> list[JsonObj]:
        """Count a finished model response. When it used up the budget and the turn goes on (``mid_work``:
        the response called tools), the model is told to wrap up: the history entry to record is returned."""
        goal, before = await self._account()
        if (mid_work and goal is not None and before is not None and goal.status == "budgetLimited"
                and before.status == "active"):
            return [goal_loop.budget_limit_message(goal)]
        return []

    async def turn_ended(self, outcome: TurnEvent, error: JsonObj | None) -> bool:
        """Count the end of the turn and apply the error stop rule; True when the goal is still active."""
        goal, _ = await self._account()
        store = self._store()
        if outcome is TurnEvent.FAIL and store is not None and goal is not None:
            status = goal_loop.status_after_error(error)
            only_from = ("active", "budgetLimited") if status == "usageLimited" else ("active",)
            stopped = None if status is None else await asyncio.to_thread(
                store.stop_goal, self._thread.id, status, only_from=only_from)
            if stopped is not None:
                goal = stopped
                await self._thread.emit(notices.thread_goal_updated(self._thread.id, self._turn_id, stopped.wire()))
        return goal is not None and goal.status == "active"
