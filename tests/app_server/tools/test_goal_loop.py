"""The pure rules of goal continuation (threads.goal_loop), the goal store's accounting and stop moves, and
the idle hooks that put queued user input before goal continuation."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from app_server.store.thread_state import Goal, ThreadStateDb
from app_server.threads import goal_loop
from app_server.threads.idle_hooks import GOAL_RANK, QUEUE_RANK, add_idle_hook


def _args(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"last_turn": "completed", "idle": True, "queued": False, "ephemeral": False}
    return {**base, **over}


@pytest.mark.parametrize(("status", "over", "reason"), [
    ("active", {}, None),
    ("active", {"last_turn": None}, None),                  # right after thread/goal/set
    (None, {}, "no goal"),
    ("paused", {}, "the goal is paused"),
    ("complete", {}, "the goal is complete"),
    ("budgetLimited", {}, "the goal is budgetLimited"),
    ("blocked", {}, "the goal is blocked"),
    ("usageLimited", {}, "the goal is usageLimited"),
    ("active", {"last_turn": "interrupted"}, "the last turn was interrupted"),
    ("active", {"last_turn": "failed"}, "the last turn failed"),
    ("active", {"idle": False}, "a turn is running"),
    ("active", {"queued": True}, "queued user input goes first"),
    ("active", {"ephemeral": True}, "goals need a persisted thread"),
    ("paused", {"idle": False}, "a turn is running"),
])
def test_continuation_decision_table(status: str | None, over: dict[str, Any], reason: str | None) -> None:
    assert goal_loop.continuation_skip_reason(status, **_args(**over)) == reason


@pytest.mark.parametrize(("info", "status"), [
    ("other", "blocked"),
    ("internalServerError", "blocked"),
    ({"responseStreamDisconnected": {"httpStatusCode": None}}, "blocked"),
    ("usageLimitExceeded", "usageLimited"),
    ("serverOverloaded", None),
    (None, "blocked"),
])
def test_what_a_failed_turn_does_to_the_goal(info: object, status: str | None) -> None:
    assert goal_loop.status_after_error({"message": "x", "codexErrorInfo": info}) == status


def test_goal_tokens_are_new_non_cached_input_plus_output() -> None:
    before = {"inputTokens": 100, "cachedInputTokens": 30, "outputTokens": 20, "reasoningOutputTokens": 4}
    after = {"inputTokens": 300, "cachedInputTokens": 80, "outputTokens": 50, "reasoningOutputTokens": 9}
    assert goal_loop.token_delta(before, after) == (200 - 50) + 30
    assert goal_loop.token_delta(after, after) == 0
    assert goal_loop.token_delta({}, {"inputTokens": 7, "outputTokens": 3}) == 10


def _goal(**over: Any) -> Goal:
    fields: dict[str, Any] = {"thread_id": "t", "objective": "a <b> & c", "status": "active", "token_budget": 100,
                              "tokens_used": 130, "time_used_seconds": 4, "created_at": 1, "updated_at": 2}
    return Goal(**{**fields, **over})


def test_the_hidden_messages_carry_the_goal_and_its_budget() -> None:
    cont = goal_loop.continuation_message(_goal(tokens_used=30))
    assert cont["type"] == "message" and cont["role"] == "user"
    text = cont["content"][0]["text"]
    assert text.startswith('<codex_internal_context source="goal">\n')
    assert text.endswith("</codex_internal_context>")
    assert "a &lt;b&gt; &amp; c" in text
    assert "- Tokens used: 30\n- Token budget: 100\n- Tokens remaining: 70" in text
    unbudgeted = goal_loop.continuation_message(_goal(token_budget=None))["content"][0]["text"]
    assert "- Token budget: none\n- Tokens remaining: unknown" in unbudgeted
    limit = goal_loop.budget_limit_message(_goal())["content"][0]["text"]
    assert "- Tokens used: 130\n- Token budget: 100" in limit and "budgetLimited" in limit


def test_accounting_reaches_the_budget_and_stop_moves_only_from_the_given_statuses(tmp_path: Path) -> None:
    db = ThreadStateDb(tmp_path)
    try:
        db.set_goal("t", objective="o", status=None, token_budget=100, budget_given=True)
        counted = db.account_goal("t", tokens=60, seconds=2, statuses=goal_loop.ACCOUNTABLE)
        assert counted is not None and (counted.status, counted.tokens_used, counted.time_used_seconds) == (
            "active", 60, 2)
        assert db.account_goal("t", tokens=0, seconds=0, statuses=goal_loop.ACCOUNTABLE) is None
        limited = db.account_goal("t", tokens=40, seconds=0, statuses=goal_loop.ACCOUNTABLE)
        assert limited is not None and (limited.status, limited.tokens_used) == ("budgetLimited", 100)
        more = db.account_goal("t", tokens=5, seconds=0, statuses=goal_loop.ACCOUNTABLE)
        assert more is not None and (more.status, more.tokens_used) == ("budgetLimited", 105)
        assert db.stop_goal("t", "blocked", only_from=("active",)) is None
        assert db.set_goal("t", objective=None, status="paused", token_budget=None, budget_given=False).status == "paused"
        assert db.account_goal("t", tokens=5, seconds=1, statuses=goal_loop.ACCOUNTABLE) is None
        # Made active again while at or over its budget, the goal is budget-limited at once (as Codex).
        again = db.set_goal("t", objective=None, status="active", token_budget=None, budget_given=False)
        assert again.status == "budgetLimited"
        raised = db.set_goal("t", objective=None, status="active", token_budget=1000, budget_given=True)
        assert raised.status == "active"
        stopped = db.stop_goal("t", "blocked", only_from=("active",))
        assert stopped is not None and stopped.status == "blocked"
        assert db.goal("t") == stopped
    finally:
        db.close()


def test_idle_hooks_run_by_rank_until_one_starts_a_turn() -> None:
    calls: list[str] = []
    thread: Any = SimpleNamespace(active=None, idle_hook=None)

    async def plain() -> None:
        calls.append("plain")

    async def goal() -> None:
        calls.append("goal")

    async def queue() -> None:
        calls.append("queue")
        if starts_turn:
            thread.active = object()

    thread.idle_hook = plain  # a hook set before the ranked ones stays, ahead of them
    add_idle_hook(thread, "goal", GOAL_RANK, goal)
    add_idle_hook(thread, "queue", QUEUE_RANK, queue)
    add_idle_hook(thread, "queue", QUEUE_RANK, queue)  # registering again replaces
    starts_turn = False
    asyncio.run(thread.idle_hook())
    assert calls == ["plain", "queue", "goal"]
    calls.clear()
    starts_turn = True
    asyncio.run(thread.idle_hook())
    assert calls == ["plain", "queue"]
