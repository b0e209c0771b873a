"""A whole agent turn against a real fake Responses server: items, order, model request shape."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.support.fake_model import exec_call, message, model_config


def _methods(client, turn_id: str) -> list[str]:  # type: ignore[no-untyped-def]
    out = []
    for m in client.notifications():
        p = m.get("params") or {}
        tid = p.get("turnId") or (p.get("turn") or {}).get("id")
        if tid == turn_id or m["method"] == "thread/status/changed":
            out.append(m["method"])
    return out


async def test_two_call_exec_turn_streams_items_in_codex_order(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([
        {"output": [exec_call("call_1", "printf hi > out.txt; echo done-marker")]},
        {"output": [message("done", deltas=["do", "ne"], item_id="msg_2")]},
    ])
    model_config(codex_home, model.url)
    client = await app_server()
    started = await client.call("thread/start", {"cwd": str(workspace)})
    thread_id = started["thread"]["id"]
    assert started["model"] == "mock-model" and started["modelProvider"] == "mock_provider"
    await client.wait_notification("thread/started")
    turn = (await client.call("turn/start", {"threadId": thread_id,
                                             "input": [{"type": "text", "text": "make out.txt"}]}))["turn"]
    assert turn["status"] == "inProgress" and turn["items"] == []
    done = await client.wait_notification("turn/completed", timeout=20)
    final = done["params"]["turn"]
    assert final["status"] == "completed"
    assert [i["type"] for i in final["items"]] == ["agentMessage"] and final["items"][0]["text"] == "done"
    assert (workspace / "out.txt").read_text() == "hi"

    completed = [m["params"]["item"] for m in client.notifications("item/completed")]
    assert [i["type"] for i in completed] == ["userMessage", "commandExecution", "agentMessage"]
    cmd = completed[1]
    assert cmd["id"] == "call_1" and cmd["exitCode"] == 0 and cmd["status"] == "completed"
    assert "done-marker" in cmd["aggregatedOutput"] and cmd["command"].startswith("/bin/bash -lc ")
    deltas = [m["params"]["delta"] for m in client.notifications("item/agentMessage/delta")]
    assert "".join(deltas) == "done"

    seq = _methods(client, turn["id"])
    assert seq[0] == "thread/status/changed" and seq[1] == "turn/started"
    assert seq[-2:] == ["thread/status/changed", "turn/completed"]
    assert seq.count("turn/completed") == 1

    requests = model.requests()
    assert len(requests) == 2
    body = requests[0]["body"]
    assert body["stream"] is True and body["store"] is False and body["prompt_cache_key"] == thread_id
    assert [t.get("name", t["type"]) for t in body["tools"]] == [  # Codex's set for a slug without metadata
        "exec_command", "write_stdin", "request_user_input", "view_image", "multi_agent_v1", "get_goal",
        "create_goal", "update_goal", "web_search"]
    roles = [i.get("role") for i in body["input"] if i.get("type") == "message"]
    assert roles[:2] == ["developer", "developer"] and roles[-1] == "user"
    headers = requests[0]["headers"]
    assert headers["session-id"] == thread_id and headers["originator"] == "pycodex_tests"
    assert "authorization" not in headers
    follow_up = requests[1]["body"]["input"]
    outputs = [i for i in follow_up if i.get("type") == "function_call_output"]
    assert outputs and outputs[0]["call_id"] == "call_1"
    assert "Process exited with code 0" in outputs[0]["output"] and "done-marker" in outputs[0]["output"]


async def test_steering_a_turn_and_interrupting_a_stalled_model(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([
        {"output": [message("never")], "stall_after": 1, "stall_s": 30},
        {"output": [message("after interrupt")]},
    ])
    model_config(codex_home, model.url)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    turn = (await client.call("turn/start", {"threadId": thread_id,
                                             "input": [{"type": "text", "text": "go"}]}))["turn"]
    await client.wait_notification("turn/started")
    for _ in range(200):  # interrupt only once the model holds the request open
        if model.requests():
            break
        await asyncio.sleep(0.02)
    bad = await client.request("turn/interrupt", {"threadId": thread_id, "turnId": "01a22b0e-0000-7000-8000-000000000000"})
    assert bad["error"]["message"] == "no active turn to interrupt"
    assert await client.call("turn/interrupt", {"threadId": thread_id, "turnId": turn["id"]}) == {}
    done = await client.wait_notification("turn/completed", timeout=10)
    assert done["params"]["turn"]["status"] == "interrupted" and done["params"]["turn"]["items"] == []
    second = (await client.call("turn/start", {"threadId": thread_id,
                                               "input": [{"type": "text", "text": "again"}]}))["turn"]
    done2 = await client.wait_notification("turn/completed", lambda p: p["turn"]["id"] == second["id"], timeout=10)
    assert done2["params"]["turn"]["status"] == "completed"
    texts = [c["text"] for i in model.requests()[1]["body"]["input"] if i.get("role") == "user"
             for c in i["content"]]
    assert any("<turn_aborted>" in t for t in texts)
