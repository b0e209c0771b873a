"""Sub-agents end to end (the multi_agent_v1 tools): a parent spawns a child thread that runs a command and
reports back; the parent waits for it and gets the child's final message. The fake model routes each
scripted reply by the task text in the requesting thread's user messages (parent and child interleave)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app_server.tools import collab_tool
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


UNKNOWN = "01a23780-8497-7003-88d9-923b173a19ab"
ID = {"ID": AGENT_ID}

#: A child that runs a command and answers twice; the parent talks to it, closes and resumes it, and asks
#: about an agent that does not exist.
LIFECYCLE: list[Any] = [
    parent_says(collab("spawn", "spawn_agent", message=f"{CHILD}: print the answer")),
    parent_says(collab("wait", "wait_agent", targets=["{{ID}}"], timeout_ms=30000), fill=ID),
    parent_says(collab("send", "send_input", target="{{ID}}", message="more please"), fill=ID),
    parent_says(collab("wait2", "wait_agent", targets=["{{ID}}"]), fill=ID),
    parent_says(collab("close", "close_agent", target="{{ID}}"), fill=ID),
    parent_says(collab("send2", "send_input", target="{{ID}}", message="again"), fill=ID),
    parent_says(collab("resume", "resume_agent", id="{{ID}}"), fill=ID),
    parent_says(collab("bad", "send_input", target=UNKNOWN, message="x")),
    parent_says(collab("bad2", "wait_agent", targets=[UNKNOWN])),
    parent_says(collab("bad3", "close_agent", target="nope")),
    parent_says(collab("bad4", "wait_agent", targets=[])),
    parent_says(collab("bad5", "spawn_agent")),
    parent_says(collab("bad6", "spawn_agent", message="x", items=[{"type": "text", "text": "y"}])),
    parent_says(collab("bad7", "wait_agent", targets=["{{ID}}"], timeout_ms=0), fill=ID),
    parent_says(collab("bad8", "resume_agent", id=UNKNOWN)),
    parent_says(collab("bad9", "close_agent", target=UNKNOWN)),
    parent_says(message("parent done")),
    {"when": CHILD, "output": [exec_call("child_cmd", "echo $((6*7))-done")]},
    {"when": CHILD, "output": [message("child saw: {{OUT}}")], "fill": {"OUT": r"(\d+-done)"}},
    {"when": CHILD, "output": [message("second answer")]},
]

#: One child allowed: the second spawn is refused.
LIMITED: list[Any] = [
    parent_says(collab("one", "spawn_agent", message=f"{CHILD} one")),
    parent_says(collab("two", "spawn_agent", message=f"{CHILD} two")),
    parent_says(collab("wait", "wait_agent", targets=["{{ID}}"]), fill=ID),
    parent_says(message("parent done")),
    {"when": f"{CHILD} one", "output": [message("one done")]},
]

#: A child that never answers: the wait (asking for 1 ms, clamped to Codex's 10 s minimum) times out.
TIMES_OUT: list[Any] = [
    parent_says(collab("spawn", "spawn_agent", message=f"{CHILD} stuck")),
    parent_says(collab("wait", "wait_agent", targets=["{{ID}}"], timeout_ms=1), fill=ID),
    parent_says(message("parent done")),
    {"when": CHILD, "output": [{"type": "stall", "seconds": 30}]},
]

#: A child whose model request fails: it errors, and the wait reports the error.
ERRORS: list[Any] = [
    parent_says(collab("spawn", "spawn_agent", message=f"{CHILD} failing")),
    parent_says(collab("wait", "wait_agent", targets=["{{ID}}"]), fill=ID),
    parent_says(message("parent done")),
    {"when": CHILD, "status": 400,
     "body": {"error": {"message": "bad child request", "type": "invalid_request_error"}}},
]

#: Depth 0: the root may not spawn at all.
TOO_DEEP: list[Any] = [
    parent_says(collab("deep", "spawn_agent", message=f"{CHILD} deep")),
    parent_says(message("parent done")),
]


def _id_of(call_id: str) -> str:
    """A fill pattern for the agent id that spawn call ``call_id`` returned."""
    return rf'"{call_id}"[^}}]{{0,40}}?agent_id\W+([0-9a-f-]{{36}})'


#: spawn_agent's options: a forked child (it starts with the parent's conversation), model and effort
#: overrides (a catalog model; an unknown one, an effort the model lacks: refused), structured items.
SPAWN_OPTIONS: list[Any] = [
    {"when": f"{CHILD} forked", "output": [message("fork ok")]},
    parent_says(collab("fork", "spawn_agent", message=f"{CHILD} forked", fork_context=True)),
    parent_says(collab("m1", "spawn_agent", message=f"{CHILD} model", model="gpt-5.5", reasoning_effort="high")),
    parent_says(collab("m2", "spawn_agent", message=f"{CHILD} unknown", model="nope")),
    parent_says(collab("m3", "spawn_agent", message=f"{CHILD} effort", reasoning_effort="ultra")),
    parent_says(collab("m4", "spawn_agent", message=f"{CHILD} default effort", model="gpt-5.5")),
    parent_says(collab("m5", "spawn_agent", items=[
        {"type": "text", "text": f"{CHILD} items"},
        {"type": "image", "image_url": "data:image/png;base64,iVBORw0KGgo="}])),
    # Then it waits for each child in turn, so all have answered before it finishes.
    *(parent_says(collab(f"w{n}", "wait_agent", targets=["{{ID}}"]), fill={"ID": _id_of(n)})
      for n in ("fork", "m1", "m4", "m5")),
    parent_says(message("parent done")),
    {"when": f"{CHILD} model", "output": [message("model ok")]},
    {"when": f"{CHILD} default effort", "output": [message("default ok")]},
    {"when": f"{CHILD} items", "output": [message("items ok")]},
]


def outputs(model: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for req in model.requests():
        if not isinstance(req["body"], dict):
            # A child closed while its request was being sent leaves a cut-off body in the fake's log.
            continue
        for item in req["body"]["input"]:
            if item.get("type") == "function_call_output":
                out[item["call_id"]] = item["output"]
    return out


def user_texts(request: dict[str, Any]) -> str:
    """The user text of one logged request ("" for a body a closed child cut off mid-send)."""
    if not isinstance(request.get("body"), dict):
        return ""
    return "\n".join(part.get("text", "") for item in request["body"]["input"] if item.get("role") == "user"
                     for part in item.get("content", []))


def notices_seen(model: Any) -> list[str]:
    """The sub-agent completion notices in the parent's last request, in order."""
    last = [r for r in model.requests() if PARENT in user_texts(r)][-1]
    return [part["text"] for item in last["body"]["input"] if item.get("role") == "user"
            for part in item["content"] if part["text"].startswith("<subagent_notification>")]


def notice(child: str, status: Any) -> str:
    """Codex's completion notice of ``child`` in ``status`` (its model form)."""
    payload = json.dumps({"agent_path": child, "status": status}, separators=(",", ":"))
    return f"<subagent_notification>\n{payload}\n</subagent_notification>"


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
    answer = await client.call("thread/read", {"threadId": child})
    read = answer["thread"]
    assert answer["readState"] is None  # Codex keeps no read state for a sub-agent
    spawn_source = read["source"]["subAgent"]["thread_spawn"]
    assert spawn_source["parent_thread_id"] == parent and spawn_source["depth"] == 1
    assert spawn_source["agent_nickname"] == spawned["nickname"] == read["agentNickname"]
    assert read["parentThreadId"] == parent and read["sessionId"] == parent and read["threadSource"] == "subagent"
    listed = await client.call("thread/list", {"sourceKinds": ["subAgentThreadSpawn"]})
    assert [t["id"] for t in listed["data"]] == [child] and listed["readStates"] == {}
    ran = [m["params"]["item"] for m in client.notifications("item/completed")
           if m["params"]["threadId"] == child and m["params"]["item"]["type"] == "commandExecution"]
    assert len(ran) == 1 and DONE in ran[0]["aggregatedOutput"]

    # The parent's last request carries the child's answer; the child (at max_depth 1) got no agent tools.
    requests = model.requests()
    last_parent = [r for r in requests if PARENT in user_texts(r)][-1]
    assert any(i.get("call_id") == "wait" and DONE in i["output"] for i in last_parent["body"]["input"]
               if i.get("type") == "function_call_output")
    # ... followed by Codex's notice of the child's first answer, after the wait's output.
    kinds = [i.get("call_id") or i["content"][0]["text"][:23] for i in last_parent["body"]["input"][-2:]]
    assert kinds == ["wait", "<subagent_notification>"]
    assert notices_seen(model) == [notice(child, {"completed": f"child saw: {DONE}"})]
    namespaces = [{t.get("name") for t in r["body"]["tools"]} for r in requests]
    child_requests = [n for n, r in zip(namespaces, requests, strict=True) if CHILD in user_texts(r)
                      and PARENT not in user_texts(r)]
    assert child_requests and all("multi_agent_v1" not in n for n in child_requests)
    assert "multi_agent_v1" in namespaces[0]
    # The child's requests say they come from a spawned agent of the parent's session, as Codex's do.
    first_child = next(r for r in requests if CHILD in user_texts(r) and PARENT not in user_texts(r))
    assert first_child["body"]["prompt_cache_key"] == parent
    headers = first_child["headers"]
    assert (headers["session-id"], headers["thread-id"], headers["x-codex-parent-thread-id"],
            headers["x-openai-subagent"]) == (parent, child, parent, "collab_spawn")
    assert "x-openai-subagent" not in requests[0]["headers"]


async def test_talking_to_an_idle_child_closing_and_resuming_it_and_refusals(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model, client, parent = await start(app_server, fake_model, codex_home, workspace, LIFECYCLE)
    assert (await run_turn(client, parent, PARENT, timeout=30))["status"] == "completed"
    outs = outputs(model)
    child = json.loads(outs["spawn"])["agent_id"]
    assert set(json.loads(outs["send"])) == {"submission_id"}
    # send_input to the idle child started its second turn; the next wait gets that turn's answer.
    assert json.loads(outs["wait2"]) == {"status": {child: {"completed": "second answer"}}, "timed_out": False}
    assert json.loads(outs["close"]) == {"previous_status": {"completed": "second answer"}}
    assert outs["send2"] == f"agent with id {child} not found"  # a closed child is unloaded
    assert json.loads(outs["resume"]) == {"status": "pending_init"}
    assert outs["bad"] == f"agent with id {UNKNOWN} not found"
    assert json.loads(outs["bad2"]) == {"status": {UNKNOWN: "not_found"}, "timed_out": False}
    assert outs["bad3"] == "invalid agent id nope: Error(ParseChar { character: 'n', index: 1 })"
    assert outs["bad4"] == "agent ids must be non-empty"
    assert outs["bad5"] == "Provide one of: message or items"
    assert outs["bad6"] == "Provide either message or items, but not both"
    assert outs["bad7"] == "timeout_ms must be greater than zero"
    assert outs["bad8"] == outs["bad9"] == f"agent with id {UNKNOWN} not found"

    done = {i["id"]: i for phase, i in collab_items(client, parent) if phase == "completed"}
    assert done["send"]["tool"] == "sendInput" and done["send"]["prompt"] == "more please"
    assert done["send"]["agentsStates"] == {child: {"status": "completed", "message": f"child saw: {DONE}"}}
    assert done["close"]["tool"] == "closeAgent" and done["close"]["status"] == "completed"
    assert (done["send2"]["status"], done["send2"]["agentsStates"]) == ("failed", {child: {"status": "notFound",
                                                                                           "message": None}})
    assert done["resume"]["tool"] == "resumeAgent" and done["resume"]["status"] == "completed"
    assert {done[k]["status"] for k in ("bad", "bad2", "bad8", "bad9")} == {"failed"}
    assert not {"bad3", "bad4", "bad5", "bad6", "bad7"} & set(done)  # refused before any item
    child_statuses = [m["params"]["status"]["type"] for m in client.notifications("thread/status/changed")
                      if m["params"]["threadId"] == child]
    assert child_statuses[-2:] == ["notLoaded", "idle"]  # closed (unloaded), then resumed (loaded again)
    loaded = (await client.call("thread/loaded/list", {}))["data"]
    assert child in loaded
    # Only the first turn's end is announced to the parent's model (the one spawn_agent started).
    assert notices_seen(model) == [notice(child, {"completed": f"child saw: {DONE}"})]


def test_a_wait_timeout_is_clamped_to_codex_bounds() -> None:
    """Codex's bounds of wait_agent's timeout_ms: 10 s at least (what timeout_ms=1 waits), an hour at most."""
    assert (collab_tool.MIN_WAIT_TIMEOUT_MS, collab_tool.MAX_WAIT_TIMEOUT_MS) == (10_000, 3_600_000)
    assert collab_tool._timeout_ms({"timeout_ms": 1}) == 10_000
    assert collab_tool._timeout_ms({}) == collab_tool._timeout_ms({"timeout_ms": None}) == 30_000
    assert collab_tool._timeout_ms({"timeout_ms": 10**9}) == 3_600_000


async def test_a_wait_that_times_out(app_server: Any, fake_model: Any, codex_home: Path, workspace: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # The wait would last the 10 s minimum (checked above); on the in-memory harness the server runs in this
    # process and the minimum is lowered so the timed-out path costs a fraction of a second. A spawned server
    # (PYCODEX_TEST_HARNESS=process) keeps the real 10 s and must give the same answer.
    monkeypatch.setattr(collab_tool, "MIN_WAIT_TIMEOUT_MS", 300)
    model, client, parent = await start(app_server, fake_model, codex_home, workspace, TIMES_OUT)
    assert (await run_turn(client, parent, PARENT, timeout=40))["status"] == "completed"
    assert json.loads(outputs(model)["wait"]) == {"status": {}, "timed_out": True}
    done = [i for phase, i in collab_items(client, parent) if phase == "completed" and i["id"] == "wait"]
    assert [(i["status"], i["receiverThreadIds"], i["agentsStates"]) for i in done] == [("completed", [], {})]


async def test_the_count_limit_refuses_a_second_child(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model, client, parent = await start(app_server, fake_model, codex_home, workspace, LIMITED,
                                        extra="[agents]\nmax_threads = 1")
    assert (await run_turn(client, parent, PARENT, timeout=30))["status"] == "completed"
    outs = outputs(model)
    child = json.loads(outs["one"])["agent_id"]
    assert outs["two"] == "collab spawn failed: agent thread limit reached"
    assert json.loads(outs["wait"]) == {"status": {child: {"completed": "one done"}}, "timed_out": False}
    refused = [i for phase, i in collab_items(client, parent) if i["id"] == "two"]
    assert [(i["status"], i["receiverThreadIds"], i["agentsStates"]) for i in refused] == [
        ("inProgress", [], {}), ("failed", [], {})]


async def test_the_depth_limit_offers_no_agent_tools(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model, client, parent = await start(app_server, fake_model, codex_home, workspace, TOO_DEEP,
                                        extra="[agents]\nmax_depth = 0")
    assert (await run_turn(client, parent, PARENT, timeout=30))["status"] == "completed"
    assert all("multi_agent_v1" not in {t.get("name") for t in r["body"]["tools"]} for r in model.requests())
    assert outputs(model)["deep"] == "unsupported call: multi_agent_v1spawn_agent"
    assert collab_items(client, parent) == []


async def test_send_input_steers_a_running_child(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    # The child's first request hangs without output; the parent's input (sent a moment later) restarts it.
    model, client, parent = await start(app_server, fake_model, codex_home, workspace, [
        parent_says(collab("spawn", "spawn_agent", message=f"{CHILD} slow")),
        {**parent_says(collab("send", "send_input", target="{{ID}}", message="STEERED"), fill=ID),
         "delay_ms": 100},
        parent_says(collab("wait", "wait_agent", targets=["{{ID}}"]), fill=ID),
        parent_says(message("parent done")),
        {"when": CHILD, "output": [{"type": "stall", "seconds": 30}]},
        {"when": "STEERED", "output": [message("steered answer")]},
    ])
    assert (await run_turn(client, parent, PARENT, timeout=30))["status"] == "completed"
    outs = outputs(model)
    child = json.loads(outs["spawn"])["agent_id"]
    assert json.loads(outs["wait"]) == {"status": {child: {"completed": "steered answer"}}, "timed_out": False}
    send = [i for phase, i in collab_items(client, parent) if phase == "completed" and i["id"] == "send"]
    assert send[0]["agentsStates"] == {child: {"status": "running", "message": None}}
    turns = [m["params"]["turn"] for m in client.notifications("turn/completed")
             if m["params"]["threadId"] == child]
    assert len(turns) == 1  # the input joined the running turn rather than starting another


async def test_interrupting_input_and_closing_a_running_child(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model, client, parent = await start(app_server, fake_model, codex_home, workspace, [
        parent_says(collab("spawn", "spawn_agent", message=f"{CHILD} stuck")),
        parent_says(collab("send", "send_input", target="{{ID}}", message="NEW-TASK", interrupt=True), fill=ID),
        parent_says(collab("close", "close_agent", target="{{ID}}"), fill=ID),
        parent_says(message("parent done")),
        {"when": CHILD, "output": [{"type": "stall", "seconds": 30}]},
        {"when": "NEW-TASK", "output": [{"type": "stall", "seconds": 30}]},
    ])
    assert (await run_turn(client, parent, PARENT, timeout=30))["status"] == "completed"
    outs = outputs(model)
    child = json.loads(outs["spawn"])["agent_id"]
    assert set(json.loads(outs["send"])) == {"submission_id"}
    assert json.loads(outs["close"]) == {"previous_status": "running"}
    turns = [m["params"]["turn"]["status"] for m in client.notifications("turn/completed")
             if m["params"]["threadId"] == child]
    assert turns == ["interrupted", "interrupted"]  # the interrupted first turn, then the closed second one
    assert any(m["params"] == {"threadId": child, "status": {"type": "notLoaded"}}
               for m in client.notifications("thread/status/changed"))
    # The interrupt was ours, so only the close is announced, as Codex does.
    assert notices_seen(model) == [notice(child, "shutdown")]


async def test_shutdown_cancels_a_running_child(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path, app_server_argv: list[str] | None
) -> None:
    if app_server_argv is not None:
        pytest.skip("looks inside pycodex's server")
    model, client, parent = await start(app_server, fake_model, codex_home, workspace, [
        parent_says(collab("spawn", "spawn_agent", message=f"{CHILD} stuck")),
        parent_says(message("parent done")),
        {"when": CHILD, "output": [{"type": "stall", "seconds": 30}]},
    ])
    assert (await run_turn(client, parent, PARENT, timeout=30))["status"] == "completed"
    child = client.app.threads.loaded[json.loads(outputs(model)["spawn"])["agent_id"]]
    task = child.active.task
    assert task is not None and not task.done()
    await client.close()
    assert task.done() and child.active is None and child.turns[-1]["status"] == "interrupted"


async def test_spawn_options_fork_model_effort_and_items(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model, client, parent = await start(app_server, fake_model, codex_home, workspace, SPAWN_OPTIONS)
    assert (await run_turn(client, parent, PARENT, timeout=30))["status"] == "completed"
    outs = outputs(model)
    assert outs["m2"] == ("Unknown model `nope` for spawn_agent. Available models: gpt-6.1-sol, gpt-6-astra, "
                          "gpt-6-sol, gpt-6-luna, gpt-5.6-sol")
    assert outs["m3"] == ("Reasoning effort `ultra` is not supported for model `mock-model`. "
                          "Supported reasoning efforts: ")
    items = collab_items(client, parent)
    # Codex announces a refused spawn and never completes its item.
    refused = [(phase, i["id"]) for phase, i in items if i["id"] in ("m2", "m3")]
    assert refused == [("started", "m2"), ("started", "m3")]
    done = {i["id"]: i for phase, i in items if phase == "completed"}
    assert (done["m1"]["model"], done["m1"]["reasoningEffort"]) == ("gpt-5.5", "high")
    assert (done["m4"]["model"], done["m4"]["reasoningEffort"]) == ("gpt-5.5", "medium")  # the model's default
    assert done["m5"]["prompt"] == f"{CHILD} items\n[image]"
    requests = model.requests()
    by_task = {t: next(r["body"] for r in requests if f"{CHILD} {t}" in user_texts(r))
               for t in ("model", "default effort")}
    assert (by_task["model"]["model"], by_task["model"]["reasoning"]) == ("gpt-5.5", {"effort": "high",
                                                                                       "summary": "auto"})
    assert by_task["default effort"]["reasoning"]["effort"] == "medium"
    # The forked child starts with the parent's conversation up to the spawn call (not the call itself).
    forked = next(r["body"] for r in requests if f"{CHILD} forked" in user_texts(r))
    tail = [(i["type"], i.get("role"), i.get("content", [{}])[0].get("text")) for i in forked["input"][3:]]
    assert tail == [("message", "user", PARENT), ("message", "user", f"{CHILD} forked")]


async def test_a_child_that_errors(app_server: Any, fake_model: Any, codex_home: Path, workspace: Path) -> None:
    model, client, parent = await start(app_server, fake_model, codex_home, workspace, ERRORS)
    assert (await run_turn(client, parent, PARENT, timeout=30))["status"] == "completed"
    waited = json.loads(outputs(model)["wait"])
    [(child, status)] = waited["status"].items()
    assert set(status) == {"errored"} and "bad child request" in status["errored"] and not waited["timed_out"]
    done = [i for phase, i in collab_items(client, parent) if phase == "completed" and i["id"] == "wait"]
    assert done[0]["status"] == "failed"  # an errored agent fails the wait item, as in Codex
    assert done[0]["agentsStates"] == {child: {"status": "errored", "message": status["errored"]}}
    assert notices_seen(model) == [notice(child, status)]


async def test_input_steered_into_an_ending_turn_gets_a_turn_of_its_own(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path, app_server_argv: list[str] | None
) -> None:
    if app_server_argv is not None:
        pytest.skip("drives pycodex's registry directly to hit the race")
    model, client, parent = await start(app_server, fake_model, codex_home, workspace, [
        parent_says(collab("spawn", "spawn_agent", message=f"{CHILD} stuck")),
        parent_says(message("parent done")),
        {"when": CHILD, "output": [{"type": "stall", "seconds": 30}]},
        {"when": "LATE-INPUT", "output": [message("late answer")]},
    ])
    assert (await run_turn(client, parent, PARENT, timeout=30))["status"] == "completed"
    child = json.loads(outputs(model)["spawn"])["agent_id"]
    thread = client.app.threads.loaded[child]
    thread.interrupt()  # the turn is ending (interrupting) when the input arrives: it will not read it
    await client.app.agents.send_input(child, [{"type": "text", "text": "LATE-INPUT", "text_elements": []}],
                                       interrupt=False)
    done = await client.wait_notification(
        "turn/completed", lambda p: p["threadId"] == child and p["turn"]["status"] == "completed", timeout=15)
    assert done["params"]["turn"]["status"] == "completed"
    assert client.app.agents.status(child).message == "late answer"
    assert "LATE-INPUT" in user_texts(model.requests()[-1])


async def test_resume_agent_finds_a_child_after_a_restart(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path, app_server_argv: list[str] | None
) -> None:
    if app_server_argv is not None:
        pytest.skip("restarts pycodex's in-memory server")
    model, client, parent = await start(app_server, fake_model, codex_home, workspace, [
        parent_says(collab("spawn", "spawn_agent", message=f"{CHILD} remember")),
        parent_says(collab("wait", "wait_agent", targets=["{{ID}}"]), fill=ID),
        parent_says(message("parent done")),
        {"when": CHILD, "output": [message("first life")]},
        parent_says(collab("resume", "resume_agent", id="{{ID}}"), fill=ID),
        parent_says(collab("send", "send_input", target="{{ID}}", message="AGAIN"), fill=ID),
        parent_says(collab("wait2", "wait_agent", targets=["{{ID}}"]), fill=ID),
        parent_says(message("parent done again")),
        {"when": "AGAIN", "output": [message("second life")]},
    ])
    assert (await run_turn(client, parent, PARENT, timeout=30))["status"] == "completed"
    child = json.loads(outputs(model)["spawn"])["agent_id"]
    await client.close()

    again = await app_server()  # a new server on the same CODEX_HOME: it spawned no agents itself
    await again.call("thread/resume", {"threadId": parent})
    assert (await run_turn(again, parent, "go on", timeout=30))["status"] == "completed"
    outs = outputs(model)
    assert json.loads(outs["resume"]) == {"status": "pending_init"}
    assert json.loads(outs["wait2"]) == {"status": {child: {"completed": "second life"}}, "timed_out": False}
    # The resumed child kept its history: its new request carries its first turn.
    last_child = [r for r in model.requests() if "AGAIN" in user_texts(r)][-1]
    assert f"{CHILD} remember" in user_texts(last_child)
