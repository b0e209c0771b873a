"""SIGKILL the app-server mid-turn, resume in a new process: history intact, the cut-off turn interrupted."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path
from typing import Any

from tests.support.fake_model import exec_call, message, model_config, run_turn


async def _kill(client: Any) -> None:
    client.process.proc.kill()  # our own child, by PID
    assert await client.wait_exit(10) == -signal.SIGKILL


def _assert_history_is_valid(body: dict[str, Any]) -> None:
    """Every function call the model made has exactly one output, after it (the API refuses otherwise)."""
    calls: list[str] = []
    outputs: list[str] = []
    for item in body["input"]:
        if item.get("type") == "function_call":
            calls.append(item["call_id"])
        elif item.get("type") == "function_call_output":
            assert item["call_id"] in calls, f"output before its call: {item['call_id']}"
            outputs.append(item["call_id"])
    assert sorted(calls) == sorted(outputs)


async def _resume_and_check(
    app_server: Any, thread_id: str, first_turn: dict[str, Any], cut_turn_id: str
) -> tuple[Any, list[dict[str, Any]]]:
    client = await app_server()
    resumed = await client.call("thread/resume", {"threadId": thread_id})
    turns = resumed["thread"]["turns"]
    assert [t["id"] for t in turns] == [first_turn["id"], cut_turn_id]
    assert turns[0]["status"] == "completed"
    assert [i["type"] for i in turns[0]["items"]] == ["userMessage", "agentMessage"]
    assert turns[0]["items"][1]["text"] == first_turn["items"][0]["text"]
    assert turns[1]["status"] == "interrupted"
    assert turns[1]["items"][0]["type"] == "userMessage"
    return client, turns


async def test_killed_while_a_command_runs_resumes_with_the_turn_interrupted(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    pid_file = workspace / "sleeper.pid"
    model = await fake_model(
        [
            {"output": [message("first answer", item_id="msg_1")]},
            {"output": [exec_call("call_slow", f"echo $$ > {pid_file}; echo started; exec sleep 20")]},
            {"output": [message("after the crash", item_id="msg_3")]},
        ]
    )
    model_config(codex_home, model.url, sandbox_mode="danger-full-access")
    first = await app_server(subprocess=True)
    thread_id = (await first.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    t1 = await run_turn(first, thread_id, "one")
    turn2 = (
        await first.call("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "two"}]})
    )["turn"]
    await first.wait_notification(
        "item/started", lambda p: p["item"]["type"] == "commandExecution", timeout=10
    )
    for _ in range(200):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.02)
    sleeper = int(pid_file.read_text().strip())
    try:
        await _kill(first)
        second, _ = await _resume_and_check(app_server, thread_id, t1, turn2["id"])
        t3 = await run_turn(second, thread_id, "three")
        assert t3["status"] == "completed" and t3["items"][0]["text"] == "after the crash"
        body = model.requests()[-1]["body"]
        _assert_history_is_valid(body)
        assert [i["call_id"] for i in body["input"] if i.get("type") == "function_call"] == ["call_slow"]
        user = [c["text"] for i in body["input"] if i.get("role") == "user" for c in i["content"]]
        assert "one" in user and "two" in user and user[-1] == "three"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(sleeper, signal.SIGKILL)


async def test_killed_while_the_model_stalls_resumes_with_the_turn_interrupted(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model(
        [
            {"output": [message("first answer", item_id="msg_1")]},
            {"output": [message("never finished")], "stall_after": 3, "stall_s": 20},
            {"output": [message("fresh start", item_id="msg_3")]},
        ]
    )
    model_config(codex_home, model.url)
    first = await app_server(subprocess=True)
    thread_id = (await first.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    t1 = await run_turn(first, thread_id, "one")
    turn2 = (
        await first.call("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "two"}]})
    )["turn"]
    await first.wait_notification("item/agentMessage/delta", lambda p: p["turnId"] == turn2["id"], timeout=10)
    await _kill(first)
    second, turns = await _resume_and_check(app_server, thread_id, t1, turn2["id"])
    assert "never finished" not in str(turns[1]["items"])
    t3 = await run_turn(second, thread_id, "three")
    assert t3["status"] == "completed" and t3["items"][0]["text"] == "fresh start"
    body = model.requests()[-1]["body"]
    _assert_history_is_valid(body)
    user = [c["text"] for i in body["input"] if i.get("role") == "user" for c in i["content"]]
    assert user[-1] == "three" and "two" in user
    # A later process still lists the thread with all three turns.
    assert await second.close() == 0
    third = await app_server()
    read = await third.call("thread/read", {"threadId": thread_id, "includeTurns": True})
    assert [t["status"] for t in read["thread"]["turns"]] == ["completed", "interrupted", "completed"]
