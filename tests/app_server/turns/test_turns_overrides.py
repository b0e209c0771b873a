"""Per-turn and per-thread settings reach the model request; merging and steering rules of active turns."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.support.fake_model import message, model_config, run_turn

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
    "additionalProperties": False,
}


def _replies(*texts: str) -> dict[str, Any]:
    return {"responses": [{"output": [message(t)]} for t in texts], "when_exhausted": "repeat_last"}




async def _wait_requests(model: Any, count: int) -> None:
    for _ in range(300):
        if len(model.requests()) >= count:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"the model saw {len(model.requests())} requests, expected {count}")


async def test_turn_overrides_stick_and_the_output_schema_is_for_onerun_turn(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model(_replies('{"answer": "x"}', "plain"))
    model_config(codex_home, model.url)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    first = await run_turn(
        client, thread_id, "structured", model="other-model", outputSchema=SCHEMA, effort="high"
    )
    assert first["status"] == "completed"
    second = await run_turn(client, thread_id, "free text")
    assert second["status"] == "completed"
    third = await run_turn(client, thread_id, "back", model="mock-model")
    assert third["status"] == "completed"
    bodies = [r["body"] for r in model.requests()]
    assert [b["model"] for b in bodies] == ["other-model", "other-model", "mock-model"]
    assert [b["reasoning"].get("effort") for b in bodies] == ["high", "high", "high"]
    assert bodies[0]["text"]["format"] == {
        "type": "json_schema",
        "strict": True,
        "schema": SCHEMA,
        "name": "codex_output_schema",
    }
    assert all("format" not in (b.get("text") or {}) for b in bodies[1:])

    def switches(body: dict) -> list[str]:  # type: ignore[type-arg]
        return [c["text"] for i in body["input"] if i.get("role") == "developer" for c in i["content"]
                if c["text"].startswith("<model_switch>")]

    assert switches(bodies[1]) == []
    assert len(switches(bodies[2])) == 1 and "other-model" in switches(bodies[2])[0]
    read = await client.call("thread/read", {"threadId": thread_id})
    assert read["thread"]["status"] == {"type": "idle"}


async def test_turn_start_during_an_active_turn_merges_into_it(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model(
        [
            {"output": [message("never")], "stall_after": 1, "stall_s": 20},
            {"output": [message("both handled")]},
        ]
    )
    model_config(codex_home, model.url)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    first = (
        await client.call("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "first"}]})
    )["turn"]
    await _wait_requests(model, 1)
    merged = (
        await client.call(
            "turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "second"}]}
        )
    )["turn"]
    assert merged["id"] == first["id"]
    done = await client.wait_notification("turn/completed", timeout=15)
    assert done["params"]["turn"]["id"] == first["id"]
    assert done["params"]["turn"]["status"] == "completed"
    assert done["params"]["turn"]["items"][0]["text"] == "both handled"
    users = [
        m["params"]["item"]
        for m in client.notifications("item/completed")
        if m["params"]["item"]["type"] == "userMessage"
    ]
    assert [u["content"][0]["text"] for u in users] == ["first", "second"]
    body = model.requests()[-1]["body"]
    texts = [c["text"] for i in body["input"] if i.get("role") == "user" for c in i["content"]]
    assert texts[-2:] == ["first", "second"]
    assert len(client.notifications("turn/started")) == 1
    await client.expect_silence(0.3)
    assert len(client.notifications("turn/completed")) == 1


async def test_steer_checks_the_expected_turn_id(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model(
        [
            {"output": [message("never")], "stall_after": 1, "stall_s": 20},
            {"output": [message("steered")]},
        ]
    )
    model_config(codex_home, model.url)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    no_turn = await client.request(
        "turn/steer",
        {"threadId": thread_id, "expectedTurnId": "nope", "input": [{"type": "text", "text": "x"}]},
    )
    assert no_turn["error"]["code"] == -32600
    turn = (
        await client.call("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "go"}]})
    )["turn"]
    await _wait_requests(model, 1)
    wrong = await client.request(
        "turn/steer",
        {"threadId": thread_id, "expectedTurnId": "wrong-id", "input": [{"type": "text", "text": "x"}]},
    )
    assert wrong["error"] == {
        "code": -32600, "data": {"appErrorCode": "turn_id_mismatch", "expectedTurnId": "wrong-id", "activeTurnId": turn['id']},
        "message": f"expected active turn id `wrong-id` but found `{turn['id']}`",
    }
    ok = await client.call(
        "turn/steer",
        {
            "threadId": thread_id,
            "expectedTurnId": turn["id"],
            "input": [{"type": "text", "text": "steer here"}],
        },
    )
    assert ok == {"turnId": turn["id"]}
    done = await client.wait_notification("turn/completed", timeout=15)
    assert done["params"]["turn"]["status"] == "completed"
    texts = [
        c["text"]
        for i in model.requests()[-1]["body"]["input"]
        if i.get("role") == "user"
        for c in i["content"]
    ]
    assert texts[-2:] == ["go", "steer here"]


async def test_config_flag_and_thread_config_reach_the_model_request(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model(_replies("ok"))
    model_config(codex_home, model.url)
    client = await app_server("-c", 'model="flag-model"')
    flagged = await client.call("thread/start", {"cwd": str(workspace)})
    assert flagged["model"] == "flag-model"
    await run_turn(client, flagged["thread"]["id"], "one")
    configured = await client.call(
        "thread/start",
        {"cwd": str(workspace), "config": {"model": "thread-model", "model_reasoning_effort": "low"}},
    )
    assert configured["model"] == "thread-model" and configured["reasoningEffort"] == "low"
    await run_turn(client, configured["thread"]["id"], "two")
    bodies = [r["body"] for r in model.requests()]
    assert [b["model"] for b in bodies] == ["flag-model", "thread-model"]
    assert bodies[1]["reasoning"]["effort"] == "low"


async def test_untrusted_approval_policy_in_config_toml_stops_the_server_at_startup(
    app_server, codex_home: Path
) -> None:
    model_config(codex_home, "http://127.0.0.1:9/v1", approval_policy="untrusted")
    client = await app_server(subprocess=True, initialize=False)
    await client.send(
        {"id": 0, "method": "initialize", "params": {"clientInfo": {"name": "x", "version": "1"}}}
    )
    assert await client.wait_exit(10) == 1
    assert (
        'Error: approval_policy = "untrusted" is no longer supported; remove this setting'
        in client.stderr_text
    )
    assert not [m for m in client.messages if m.get("id") == 0]


# Runs until the test creates ./go (bounded: 10 s), so the steer surely lands while it runs, however loaded.
GATED_ECHO = "echo a; for i in $(seq 200); do [ -f go ] && break; sleep 0.05; done; echo b"


async def test_steer_during_a_command_follows_its_output_in_the_next_request(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    from tests.support.fake_model import exec_call

    model = await fake_model(
        [
            {"output": [message("thinking", item_id="m1"), exec_call("call_s", GATED_ECHO)]},
            {"output": [message("final", item_id="m2")]},
        ]
    )
    model_config(codex_home, model.url)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    turn = (
        await client.call("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "x"}]})
    )["turn"]
    await client.wait_notification("item/commandExecution/outputDelta", timeout=10)
    await client.call(
        "turn/steer",
        {"threadId": thread_id, "expectedTurnId": turn["id"], "input": [{"type": "text", "text": "steer!"}]},
    )
    (workspace / "go").touch()  # the steer is in: let the command finish
    done = await client.wait_notification("turn/completed", timeout=15)
    assert done["params"]["turn"]["items"][0]["text"] == "final"
    order = [
        (m["params"]["item"]["type"], m["params"]["item"]["id"])
        for m in client.notifications("item/completed")
    ]
    assert [t for t, _ in order] == [
        "userMessage",
        "agentMessage",
        "commandExecution",
        "userMessage",
        "agentMessage",
    ]
    assert len(model.requests()) == 2
    tail = model.requests()[-1]["body"]["input"][-5:]
    assert [i["type"] for i in tail] == [
        "message",
        "message",
        "function_call",
        "function_call_output",
        "message",
    ]
    assert tail[1]["role"] == "assistant" and tail[1]["content"][0]["text"] == "thinking"
    assert tail[4]["role"] == "user" and tail[4]["content"][0]["text"] == "steer!"


async def test_cwd_and_sandbox_overrides_resend_the_context_before_the_next_message(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model(_replies("ok"))
    model_config(codex_home, model.url)
    sub = workspace / "sub"
    sub.mkdir()
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await run_turn(client, thread_id, "first")
    await run_turn(client, thread_id, "moved", cwd=str(sub))
    await run_turn(client, thread_id, "locked", sandboxPolicy={"type": "readOnly"})
    await run_turn(client, thread_id, "unchanged")
    requests = model.requests()

    def added(n: int) -> list[tuple[str, str]]:
        before = len(requests[n - 1]["body"]["input"])
        return [(i["role"], i["content"][0].get("text", "")) for i in requests[n]["body"]["input"][before:]]

    moved = added(1)
    assert [role for role, _ in moved] == ["assistant", "developer", "user", "user"]
    assert moved[1][1].startswith("<permissions instructions>")
    assert moved[2][1].startswith("<environment_context>") and f"<cwd>{sub}</cwd>" in moved[2][1]
    assert moved[3][1] == "moved"
    locked = added(2)
    assert [role for role, _ in locked] == ["assistant", "developer", "user", "user"]
    assert "read-only" in locked[1][1] and locked[3][1] == "locked"
    assert [role for role, _ in added(3)] == ["assistant", "user"]
