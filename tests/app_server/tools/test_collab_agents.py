"""Sub-agents end to end (the multi_agent_v1 tools): a parent spawns a child thread that runs a command and
reports back; the parent waits for it and gets the child's final message. The fake model routes each
scripted reply by the task text in the requesting thread's user messages (parent and child interleave)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.fake_model import exec_call, message, model_config, run_turn

PARENT = "PARENT-TASK"
CHILD = "CHILD-TASK"
#: The command prints 42-done only when it really runs (the task text holds `$((6*7))-done`).
DONE = "42-done"
#: Finds the child's id in the spawn_agent output the parent's next request carries.
AGENT_ID = r"agent_id\W+([0-9a-f-]{36})"


def collab(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    """A model call of a multi_agent_v1 tool."""
    return {"type": "function_call", "namespace": "multi_agent_v1", "name": name, "call_id": call_id,
            "arguments": json.dumps(args)}


def parent_says(*items: Any, fill: dict[str, str] | None = None) -> dict[str, Any]:
    reply: dict[str, Any] = {"when": PARENT, "output": list(items)}
    if fill:
        reply["fill"] = fill
    return reply


def outputs(model: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for req in model.requests():
        for item in req["body"]["input"]:
            if item.get("type") == "function_call_output":
                out[item["call_id"]] = item["output"]
    return out


def user_texts(request: dict[str, Any]) -> str:
    return "\n".join(part.get("text", "") for item in request["body"]["input"] if item.get("role") == "user"
                     for part in item.get("content", []))


def collab_items(client: Any, thread_id: str) -> list[tuple[str, dict[str, Any]]]:
    """(started|completed, item) of every collabAgentToolCall item announced on ``thread_id``, in order."""
    return [(m["method"].removeprefix("item/"), m["params"]["item"]) for m in client.notifications()
            if m["method"] in ("item/started", "item/completed") and m["params"]["threadId"] == thread_id
            and m["params"]["item"]["type"] == "collabAgentToolCall"]


async def start(app_server: Any, fake_model: Any, codex_home: Path, workspace: Path, script: list[Any],
                extra: str = "") -> tuple[Any, Any, str]:
    model = await fake_model(script)
    model_config(codex_home, model.url, extra=extra)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    return model, client, thread_id


async def test_a_sub_agent_runs_a_command_and_reports_back(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model, client, parent = await start(app_server, fake_model, codex_home, workspace, [
        parent_says(collab("spawn", "spawn_agent", message=f"{CHILD}: print the answer")),
        parent_says(collab("wait", "wait_agent", targets=["{{ID}}"], timeout_ms=30000), fill={"ID": AGENT_ID}),
        parent_says(message("parent done")),
        {"when": CHILD, "output": [exec_call("child_cmd", "echo $((6*7))-done")]},
        {"when": CHILD, "output": [message("child saw: {{OUT}}")], "fill": {"OUT": r"(\d+-done)"}},
    ])
    final = await run_turn(client, parent, PARENT, timeout=30)
    assert final["status"] == "completed"

    outs = outputs(model)
    spawned = json.loads(outs["spawn"])
    child = spawned["agent_id"]
    assert set(spawned) == {"agent_id", "nickname"} and child != parent
    waited = json.loads(outs["wait"])
    assert waited == {"status": {child: {"completed": f"child saw: {DONE}"}}, "timed_out": False}

    items = collab_items(client, parent)
    assert [(phase, i["tool"], i["status"]) for phase, i in items] == [
        ("started", "spawnAgent", "inProgress"), ("completed", "spawnAgent", "completed"),
        ("started", "wait", "inProgress"), ("completed", "wait", "completed")]
    spawn_started, spawn_done, wait_started, wait_done = (i for _, i in items)
    assert spawn_started["receiverThreadIds"] == [] and spawn_started["prompt"] == f"{CHILD}: print the answer"
    assert spawn_done["receiverThreadIds"] == [child] and spawn_done["model"] == "mock-model"
    assert all(i["senderThreadId"] == parent and i["id"] in ("spawn", "wait") for _, i in items)
    assert wait_started["receiverThreadIds"] == [child]
    assert wait_done["agentsStates"] == {child: {"status": "completed", "message": f"child saw: {DONE}"}}

    assert spawn_done["agentsStates"] == {child: {"status": "pendingInit", "message": None}}

    # The child is a real thread, marked as the parent's sub-agent; as in Codex it is announced by its status
    # (no thread/started), and its command really ran.
    assert [m["params"]["thread"]["id"] for m in client.notifications("thread/started")] == [parent]
    statuses = [m["params"]["status"] for m in client.notifications("thread/status/changed")
                if m["params"]["threadId"] == child]
    assert statuses[0] == {"type": "idle"} and statuses[-1] == {"type": "idle"}
    read = (await client.call("thread/read", {"threadId": child}))["thread"]
    spawn_source = read["source"]["subAgent"]["thread_spawn"]
    assert spawn_source["parent_thread_id"] == parent and spawn_source["depth"] == 1
    assert spawn_source["agent_nickname"] == spawned["nickname"] == read["agentNickname"]
    assert read["parentThreadId"] == parent and read["sessionId"] == parent and read["threadSource"] == "subagent"
    listed = (await client.call("thread/list", {"sourceKinds": ["subAgentThreadSpawn"]}))["data"]
    assert [t["id"] for t in listed] == [child]
    ran = [m["params"]["item"] for m in client.notifications("item/completed")
           if m["params"]["threadId"] == child and m["params"]["item"]["type"] == "commandExecution"]
    assert len(ran) == 1 and DONE in ran[0]["aggregatedOutput"]

    # The parent's last request carries the child's answer; the child (at max_depth 1) got no agent tools.
    requests = model.requests()
    last_parent = [r for r in requests if PARENT in user_texts(r)][-1]
    assert any(i.get("call_id") == "wait" and DONE in i["output"] for i in last_parent["body"]["input"]
               if i.get("type") == "function_call_output")
    namespaces = [{t.get("name") for t in r["body"]["tools"]} for r in requests]
    child_requests = [n for n, r in zip(namespaces, requests, strict=True) if CHILD in user_texts(r)
                      and PARENT not in user_texts(r)]
    assert child_requests and all("multi_agent_v1" not in n for n in child_requests)
    assert "multi_agent_v1" in namespaces[0]
