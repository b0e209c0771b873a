"""The model's goal tools as in Codex 0.169: get_goal, create_goal (refused while a goal is unfinished) and
update_goal, on the same goal thread/goal/get sees, announced with thread/goal/updated."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app_server.tools.goal_tool import ALREADY_HAS_GOAL
from tests.support.fake_model import message, model_config, run_turn


def _call(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    return {"type": "function_call", "name": name, "call_id": call_id, "arguments": json.dumps(args)}


def _outputs(model: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for req in model.requests():
        for item in req["body"]["input"]:
            if item.get("type") == "function_call_output":
                out[item["call_id"]] = item["output"]
    return out


async def test_goal_tools_create_get_refuse_and_complete(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([
        {"output": [_call("c1", "get_goal")]},
        {"output": [_call("c2", "create_goal", objective="ship it", token_budget=5000)]},
        {"output": [_call("c3", "create_goal", objective="another")]},
        {"output": [_call("c4", "update_goal", status="complete")]},
        {"output": [message("done")]},
    ])
    model_config(codex_home, model.url)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    final = await run_turn(client, thread_id, "work on a goal", timeout=20)
    assert final["status"] == "completed"

    outs = _outputs(model)
    assert json.loads(outs["c1"]) == {"goal": None, "remainingTokens": None, "completionBudgetReport": None}
    created = json.loads(outs["c2"])
    assert created["goal"]["objective"] == "ship it" and created["goal"]["status"] == "active"
    assert created["goal"]["tokenBudget"] == 5000 and created["remainingTokens"] == 5000
    assert outs["c3"] == ALREADY_HAS_GOAL
    # Each response after the one that created the goal counts (the fake's default usage: 10 in + 5 out);
    # update_goal runs before its own response's usage is known, which then counts toward the completed goal.
    done = json.loads(outs["c4"])
    assert done["goal"]["status"] == "complete" and done["remainingTokens"] == 4985
    assert done["completionBudgetReport"] == "Goal achieved. Report final budget usage to the user: tokens used: 15 of 5000."

    updates = [m["params"] for m in client.notifications("thread/goal/updated")]
    assert [(u["goal"]["status"], u["goal"]["tokensUsed"]) for u in updates] == [
        ("active", 0), ("active", 15), ("complete", 15), ("complete", 30)]
    assert all(u["turnId"] == final["id"] and u["threadId"] == thread_id for u in updates)
    got = await client.call("thread/goal/get", {"threadId": thread_id})
    assert got["goal"]["status"] == "complete" and got["goal"]["objective"] == "ship it"
    assert got["goal"]["tokensUsed"] == 30  # as Codex 0.169: the closing "done" response does not count


async def test_update_goal_without_a_goal_is_refused(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([
        {"output": [_call("u1", "update_goal", status="paused")]},
        {"output": [message("ok")]},
    ])
    model_config(codex_home, model.url)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await run_turn(client, thread_id, "pause", timeout=20)
    assert _outputs(model)["u1"] == f"cannot update goal for thread {thread_id}: no goal exists"
    assert client.notifications("thread/goal/updated") == []
