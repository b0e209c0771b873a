"""Goal continuation turns as Codex 0.169 runs them (recorded against the binary with the fake model):
thread/goal/set on an idle thread starts a turn toward the goal, each completed turn with the goal still
active starts the next, with a hidden continuation message and no userMessage item; tokens (non-cached
input plus output) are added to the goal and announced with thread/goal/updated. The loop stops when the
model completes the goal, at the token budget, when the client pauses or clears the goal, and after an
interrupt (until the next completed turn); a failed turn blocks the goal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.fake_model import exec_call, message, model_config, run_turn

CONTEXT_TAG = '<codex_internal_context source="goal">'


def _usage(inp: int, out: int, cached: int = 0) -> dict[str, Any]:
    return {"input_tokens": inp, "input_tokens_details": {"cached_tokens": cached}, "output_tokens": out,
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": inp + out}


def _call(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    return {"type": "function_call", "name": name, "call_id": call_id, "arguments": json.dumps(args)}


def _texts(item: dict[str, Any]) -> list[str]:
    return [str(part.get("text", "")) for part in item.get("content") or [] if isinstance(part, dict)]


def _goal_messages(body: dict[str, Any], opening: str) -> list[dict[str, Any]]:
    """The hidden goal messages of a request's input whose text starts with ``opening`` after the tag."""
    return [item for item in body["input"] if item.get("type") == "message" and item.get("role") == "user"
            and any(t.startswith(f"{CONTEXT_TAG}\n{opening}") for t in _texts(item))]


def _continuations(body: dict[str, Any]) -> list[dict[str, Any]]:
    return _goal_messages(body, "Keep working on the thread's active goal.")


async def _start(app_server: Any, fake_model: Any, codex_home: Path, workspace: Path,
                 script: list[Any]) -> tuple[Any, Any, str]:
    model = await fake_model(script)
    model_config(codex_home, model.url)
    client = await app_server(codex_home=codex_home, experimental=True)  # experimental: thread/readState/changed
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    return model, client, thread_id


async def _set_goal(client: Any, thread_id: str, **params: Any) -> dict[str, Any]:
    goal: dict[str, Any] = (await client.call("thread/goal/set", {"threadId": thread_id, **params}))["goal"]
    return goal


def _turn_ids(client: Any, method: str) -> list[str]:
    return [m["params"]["turn"]["id"] for m in client.notifications(method)]


def _goal_updates(client: Any) -> list[tuple[str | None, str, int]]:
    """(turn id, status, tokens) of each thread/goal/updated, leaving out the ones that only moved the time
    (a slow machine may spend a second in a turn: its count announces the seconds alone)."""
    updates: list[tuple[str | None, str, int]] = []
    for m in client.notifications("thread/goal/updated"):
        entry = (m["params"]["turnId"], m["params"]["goal"]["status"], m["params"]["goal"]["tokensUsed"])
        if not updates or updates[-1][1:] != entry[1:]:
            updates.append(entry)
    return updates


async def test_a_goal_runs_two_continuation_turns_and_stops(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model, client, thread_id = await _start(app_server, fake_model, codex_home, workspace, [
        {"output": [message("step one")], "usage": _usage(100, 20, cached=30)},        # continuation 1
        {"output": [_call("u1", "update_goal", status="complete")], "usage": _usage(200, 10)},  # continuation 2
        {"output": [message("done")], "usage": _usage(50, 5)},                       # after update_goal
        {"output": [message("you're welcome")]},                                      # the user's own turn
    ])
    goal = await _set_goal(client, thread_id, objective="write the report", tokenBudget=10000)
    assert goal["status"] == "active" and goal["tokensUsed"] == 0

    first = (await client.wait_notification("turn/completed", timeout=20))["params"]["turn"]
    second = (await client.wait_notification("turn/completed", timeout=20))["params"]["turn"]
    assert first["status"] == second["status"] == "completed"
    # The next turn to start is the user's: no third continuation after the goal was completed.
    user_turn = await run_turn(client, thread_id, "thanks", timeout=20)
    assert user_turn["status"] == "completed"
    started, completed = _turn_ids(client, "turn/started"), _turn_ids(client, "turn/completed")
    assert started == completed == [first["id"], second["id"], user_turn["id"]]

    # The continuation turns show no user message; their input reached the model hidden.
    items = [m["params"]["item"] for m in client.notifications("item/completed")
             if m["params"]["turnId"] in (first["id"], second["id"])]
    assert [i["type"] for i in items if i["type"] == "userMessage"] == []
    requests = [r["body"] for r in model.requests()]
    assert len(requests) == 4
    opening = _continuations(requests[0])
    assert len(opening) == 1 and requests[0]["input"][-1] == opening[0]
    text = _texts(opening[0])[0]
    assert "write the report" in text and "- Tokens used: 0" in text and "- Tokens remaining: 10000" in text
    second_opening = _continuations(requests[1])
    assert len(second_opening) == 2 and "- Tokens used: 90" in _texts(second_opening[1])[0]
    assert len(_continuations(requests[3])) == 2  # the user's turn added none

    # 90 = 100 input - 30 cached + 20 output; the response that completed the goal counts (210), the
    # closing "done" and the user's turn after it do not (as Codex 0.169).
    updates = _goal_updates(client)
    assert updates == [
        (None, "active", 0),
        (first["id"], "active", 90),
        (second["id"], "complete", 90),    # update_goal's own announcement
        (second["id"], "complete", 300),   # its response's usage, counted when it arrived
    ]
    got = (await client.call("thread/goal/get", {"threadId": thread_id}))["goal"]
    assert got["status"] == "complete" and got["tokensUsed"] == 300
    # A turn the goal continues from leaves the read state alone (Codex announces none for it).
    assert [m["params"]["readState"]["firstUnread"] for m in client.notifications("thread/readState/changed")] \
        == [{"type": "turn", "turnId": second["id"]}, {"type": "turn", "turnId": second["id"]}]


async def test_the_token_budget_stops_continuation_with_budget_limited(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model, client, thread_id = await _start(app_server, fake_model, codex_home, workspace, [
        {"output": [_call("g1", "get_goal")], "usage": _usage(100, 20)},  # reaches the budget of 100 mid-work
        {"output": [message("wrapping up")], "usage": _usage(40, 5)},
        {"output": [message("it is over budget")]},                       # the user's turn
    ])
    await _set_goal(client, thread_id, objective="tidy the docs", tokenBudget=100)
    cont = (await client.wait_notification("turn/completed", timeout=20))["params"]["turn"]
    assert cont["status"] == "completed"
    user_turn = await run_turn(client, thread_id, "how far did it get?", timeout=20)
    assert _turn_ids(client, "turn/started") == [cont["id"], user_turn["id"]]

    requests = [r["body"] for r in model.requests()]
    assert len(requests) == 3
    steer = _goal_messages(requests[1], "The thread's active goal has used up its token budget.")
    assert len(steer) == 1 and requests[1]["input"][-1] == steer[0]  # after the tool output, before sampling on
    assert "- Tokens used: 120" in _texts(steer[0])[0] and "- Token budget: 100" in _texts(steer[0])[0]
    assert len(_continuations(requests[2])) == 1
    # A budget-limited goal still counts its turns (Codex: 120, then 45, then the user's 15).
    assert _goal_updates(client) == [
        (None, "active", 0), (cont["id"], "budgetLimited", 120), (cont["id"], "budgetLimited", 165),
        (user_turn["id"], "budgetLimited", 180)]


async def test_a_turn_that_ends_over_budget_starts_no_continuation_and_gets_no_wrap_up_note(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model, client, thread_id = await _start(app_server, fake_model, codex_home, workspace, [
        {"output": [message("a big step")], "usage": _usage(100, 20)},
        {"output": [message("over budget")]},
    ])
    await _set_goal(client, thread_id, objective="tidy the docs", tokenBudget=50)
    cont = (await client.wait_notification("turn/completed", timeout=20))["params"]["turn"]
    user_turn = await run_turn(client, thread_id, "and now?", timeout=20)
    assert _turn_ids(client, "turn/started") == [cont["id"], user_turn["id"]]
    requests = [r["body"] for r in model.requests()]
    assert len(requests) == 2
    assert _goal_messages(requests[1], "The thread's active goal has used up its token budget.") == []
    assert _goal_updates(client)[:2] == [(None, "active", 0), (cont["id"], "budgetLimited", 120)]


async def _hold_first_turn(app_server: Any, fake_model: Any, codex_home: Path, workspace: Path,
                           after: list[Any]) -> tuple[Any, Any, str, str]:
    """A thread whose first continuation turn runs a command that waits for the file ``go``."""
    model, client, thread_id = await _start(app_server, fake_model, codex_home, workspace, [
        {"output": [exec_call("e1", "while [ ! -f go ]; do sleep 0.05; done; echo went")]},
        *after,
    ])
    await _set_goal(client, thread_id, objective="keep going")
    await client.wait_notification("item/started", lambda p: p["item"]["type"] == "commandExecution", timeout=20)
    turn_id = _turn_ids(client, "turn/started")[0]
    return model, client, thread_id, turn_id


async def test_pausing_the_goal_stops_continuation_after_the_running_turn(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model, client, thread_id, turn_id = await _hold_first_turn(app_server, fake_model, codex_home, workspace, [
        {"output": [message("paused here")]}, {"output": [message("user turn")]}])
    paused = await _set_goal(client, thread_id, status="paused")
    assert paused["status"] == "paused"
    (workspace / "go").write_text("")
    done = await client.wait_notification("turn/completed", lambda p: p["turn"]["id"] == turn_id, timeout=20)
    assert done["params"]["turn"]["status"] == "completed"
    user_turn = await run_turn(client, thread_id, "hi", timeout=20)
    assert _turn_ids(client, "turn/started") == [turn_id, user_turn["id"]]
    assert len(model.requests()) == 3
    assert (await client.call("thread/goal/get", {"threadId": thread_id}))["goal"]["status"] == "paused"


async def test_clearing_the_goal_stops_continuation_after_the_running_turn(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model, client, thread_id, turn_id = await _hold_first_turn(app_server, fake_model, codex_home, workspace, [
        {"output": [message("cleared here")]}, {"output": [message("user turn")]}])
    assert (await client.call("thread/goal/clear", {"threadId": thread_id}))["cleared"] is True
    (workspace / "go").write_text("")
    await client.wait_notification("turn/completed", lambda p: p["turn"]["id"] == turn_id, timeout=20)
    user_turn = await run_turn(client, thread_id, "hi", timeout=20)
    assert _turn_ids(client, "turn/started") == [turn_id, user_turn["id"]]
    assert len(model.requests()) == 3
    assert (await client.call("thread/goal/get", {"threadId": thread_id}))["goal"] is None


async def test_an_interrupt_stops_continuation_until_the_next_completed_turn(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model, client, thread_id = await _start(app_server, fake_model, codex_home, workspace, [
        {"output": [message("never finished")], "stall_after": 2, "stall_s": 20},  # holds after item/started
        {"output": [message("hello back")]},                               # the user's turn
        {"output": [_call("u1", "update_goal", status="complete")]},       # the loop resumes after it
        {"output": [message("done")]},
    ])
    await _set_goal(client, thread_id, objective="keep going")
    cont = (await client.wait_notification("turn/started", timeout=20))["params"]["turn"]["id"]
    await client.wait_notification("item/started", lambda p: p["item"]["type"] == "agentMessage", timeout=20)
    await client.call("turn/interrupt", {"threadId": thread_id, "turnId": cont})
    ended = await client.wait_notification("turn/completed", lambda p: p["turn"]["id"] == cont, timeout=20)
    assert ended["params"]["turn"]["status"] == "interrupted"
    # Codex keeps the goal active after an interrupt but starts no turn toward it.
    assert (await client.call("thread/goal/get", {"threadId": thread_id}))["goal"]["status"] == "active"

    user_turn = await run_turn(client, thread_id, "hello", timeout=20)
    resumed = await client.wait_notification(
        "turn/completed", lambda p: p["turn"]["id"] not in (cont, user_turn["id"]), timeout=20)
    assert _turn_ids(client, "turn/started") == [cont, user_turn["id"], resumed["params"]["turn"]["id"]]
    requests = [r["body"] for r in model.requests()]
    assert len(requests) == 4
    assert len(_continuations(requests[1])) == 1  # the user's turn carries only the interrupted one
    assert len(_continuations(requests[2])) == 2
    assert (await client.call("thread/goal/get", {"threadId": thread_id}))["goal"]["status"] == "complete"


async def test_a_failed_turn_blocks_the_goal(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model, client, thread_id = await _start(app_server, fake_model, codex_home, workspace, [
        {"status": 400, "body": {"error": {"message": "bad request", "type": "invalid_request_error"}}},
        {"output": [message("user turn")]},
    ])
    await _set_goal(client, thread_id, objective="keep going")
    failed = (await client.wait_notification("turn/completed", timeout=20))["params"]["turn"]
    assert failed["status"] == "failed"
    assert _goal_updates(client) == [(None, "active", 0), (failed["id"], "blocked", 0)]
    user_turn = await run_turn(client, thread_id, "hi", timeout=20)
    assert _turn_ids(client, "turn/started") == [failed["id"], user_turn["id"]]
    assert len(model.requests()) == 2


async def test_a_goal_the_model_creates_in_a_user_turn_continues_after_it(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model, client, thread_id = await _start(app_server, fake_model, codex_home, workspace, [
        {"output": [_call("c1", "create_goal", objective="tidy the docs")]},
        {"output": [message("goal set")]},
        {"output": [_call("u1", "update_goal", status="complete")]},  # the continuation turn
        {"output": [message("done")]},
    ])
    user_turn = await run_turn(client, thread_id, "set yourself a goal", timeout=20)
    cont = (await client.wait_notification(
        "turn/completed", lambda p: p["turn"]["id"] != user_turn["id"], timeout=20))["params"]["turn"]
    assert _turn_ids(client, "turn/started") == [user_turn["id"], cont["id"]]
    assert "userMessage" not in [m["params"]["item"]["type"] for m in client.notifications("item/completed")
                                 if m["params"]["turnId"] == cont["id"]]
    requests = [r["body"] for r in model.requests()]
    assert len(requests) == 4 and len(_continuations(requests[2])) == 1
    assert requests[2]["input"][-1] == _continuations(requests[2])[0]
    assert (await client.call("thread/goal/get", {"threadId": thread_id}))["goal"]["status"] == "complete"


async def test_queued_user_input_goes_before_the_next_continuation(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model, client, thread_id, turn_id = await _hold_first_turn(app_server, fake_model, codex_home, workspace, [
        {"output": [message("continuation one done")]},
        {"output": [message("queued answer")]},                            # the queued submission's turn
        {"output": [_call("u1", "update_goal", status="complete")]},       # then the loop resumes
        {"output": [message("done")]},
    ])
    await client.call("thread/queue/add", {"threadId": thread_id, "clientUserMessageId": "q1",
                                           "input": [{"type": "text", "text": "queued hi"}]})
    (workspace / "go").write_text("")
    await client.wait_notification("turn/completed", lambda p: p["turn"]["id"] == turn_id, timeout=20)
    queued = (await client.wait_notification("turn/completed", timeout=20))["params"]["turn"]
    resumed = (await client.wait_notification("turn/completed", timeout=20))["params"]["turn"]
    assert _turn_ids(client, "turn/started") == [turn_id, queued["id"], resumed["id"]]
    user_items = [m["params"]["item"] for m in client.notifications("item/completed")
                  if m["params"]["item"]["type"] == "userMessage"]
    assert [m["content"][0]["text"] for m in user_items] == ["queued hi"]
    requests = [r["body"] for r in model.requests()]
    assert len(requests) == 5 and len(_continuations(requests[2])) == 1 and len(_continuations(requests[3])) == 2
    assert (await client.call("thread/goal/get", {"threadId": thread_id}))["goal"]["status"] == "complete"


async def test_an_ephemeral_thread_refuses_goals(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([{"output": [message("never asked")]}])
    model_config(codex_home, model.url)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace), "ephemeral": True}))["thread"]["id"]
    refused = {"code": -32600, "data": {"appErrorCode": "invalid_request"},
               "message": f"ephemeral thread does not support goals: {thread_id}"}
    for method, params in (("thread/goal/set", {"objective": "x"}), ("thread/goal/get", {}),
                           ("thread/goal/clear", {}), ("thread/goal/set", {"status": "paused"})):
        answer = await client.request(method, {"threadId": thread_id, **params})
        assert answer["error"] == refused, method
    assert client.notifications("thread/goal/updated") == [] and model.requests() == []
