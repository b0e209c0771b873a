"""Codex 0.169's experimental thread/timeline/list, thread/sample, thread/prepareApprovedPlan,
turn/settings/update and thread/realtime/* on the in-memory pair. Texts and shapes are the 0.169 binary's
(tests/app_server/test_experimental_methods_codex.py sends the same requests to both servers); every answer
and notification is checked against Codex's experimental schema by the client, except the timeline's, whose
camelCase turn markers Codex's own schema gets wrong (it says snake_case)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.support.errors import as_codex
from tests.support.fake_model import exec_call, message, model_config, run_turn

MISSING = "00000000-0000-7000-8000-000000000000"


async def _client(app_server: Any, fake_model: Any, codex_home: Path, extra: str = "") -> tuple[Any, Any]:
    model = await fake_model({"responses": [{"output": [message("reply")]}], "when_exhausted": "repeat_last"})
    model_config(codex_home, model.url, extra=extra)
    return await app_server(experimental=True, codex_home=codex_home), model


async def _error(client: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    response = await client.request(method, params)
    assert "error" in response, response
    return as_codex(response["error"])


async def model_requests(model: Any, count: int, timeout: float = 10.0) -> None:
    """Wait (bounded) until the fake model has received ``count`` requests."""
    async with asyncio.timeout(timeout):
        while len(model.requests()) < count:
            await asyncio.sleep(0.02)


def _invalid(message: str) -> dict[str, Any]:
    return {"code": -32600, "message": message}


async def test_timeline_lists_turn_markers_and_items_newest_page_first(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    client, _ = await _client(app_server, fake_model, codex_home)
    client.raise_violations = lambda: None  # Codex's schema says turn_id where Codex (and pycodex) send turnId
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    fresh = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    first = await run_turn(client, tid, "one")
    second = await run_turn(client, tid, "two")
    whole = await client.call("thread/timeline/list", {"threadId": tid})
    kinds = [(e["type"], e.get("turnId"), e.get("item", {}).get("type")) for e in whole["data"]]
    assert kinds == [
        ("turnStarted", first["id"], None), ("item", first["id"], "userMessage"),
        ("item", first["id"], "agentMessage"), ("turnCompleted", first["id"], None),
        ("turnStarted", second["id"], None), ("item", second["id"], "userMessage"),
        ("item", second["id"], "agentMessage"), ("turnCompleted", second["id"], None),
    ]
    positions = [e["position"] for e in whole["data"]]
    assert positions == sorted(positions) and len(set(positions)) == len(positions)
    assert whole["nextCursor"] is None and whole["activeRealtimeSessionAtPageStart"] is None
    done = whole["data"][3]
    assert done["status"] == "completed" and done["error"] is None and done["startedAt"] == first["startedAt"]
    assert whole["data"][2]["item"]["text"] == "reply"

    # Pages of 3, newest first; each page in rollout order, the cursor naming its oldest entry.
    seen: list[dict[str, Any]] = []
    cursor = None
    for _ in range(4):
        params: dict[str, Any] = {"threadId": tid, "limit": 3}
        if cursor is not None:
            params["cursor"] = cursor
        page = await client.call("thread/timeline/list", params)
        seen = page["data"] + seen
        cursor = page["nextCursor"]
        if cursor is None:
            break
        anchor = json.loads(cursor)
        assert list(anchor) == ["threadId", "position", "kind", "id"]
        assert (anchor["threadId"], anchor["position"]) == (tid, page["data"][0]["position"])
    assert seen == whole["data"] and cursor is None
    zero = await client.call("thread/timeline/list", {"threadId": tid, "limit": 0})
    assert zero["data"] == whole["data"][-1:]  # a page holds at least one entry

    assert await _error(client, "thread/timeline/list", {"threadId": tid, "cursor": "zzz"}) == _invalid(
        "invalid thread timeline cursor")
    other = json.dumps({"threadId": fresh, "position": 1, "kind": 0, "id": "x"})
    assert await _error(client, "thread/timeline/list", {"threadId": tid, "cursor": other}) == _invalid(
        "thread timeline cursor belongs to another thread")
    unsupported = {"code": -32601, "message": "thread/timeline/list is not supported yet"}
    assert await _error(client, "thread/timeline/list", {"threadId": fresh}) == unsupported
    assert await _error(client, "thread/timeline/list", {"threadId": MISSING}) == unsupported

    # Not loaded any more: read from the rollout alone, the same entries.
    await client.call("thread/unsubscribe", {"threadId": tid})
    again = await app_server(experimental=True)
    again.raise_violations = lambda: None
    assert (await again.call("thread/timeline/list", {"threadId": tid}))["data"] == whole["data"]


async def test_sample_asks_the_model_with_the_thread_context_and_adds_nothing(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    client, model = await _client(app_server, fake_model, codex_home)
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    assert await _error(client, "thread/sample", {"threadId": tid, "expectedTurnId": MISSING, "prompt": "x"}) == \
        _invalid("sample source turn must be the latest finished turn")
    turn = await run_turn(client, tid, "hello")
    before = (await client.call("thread/read", {"threadId": tid, "includeTurns": True}))["thread"]["turns"]
    sample = await client.call("thread/sample", {"threadId": tid, "expectedTurnId": turn["id"], "prompt": "sum up"})
    assert sample == {"sourceTurnId": turn["id"], "responseId": "resp_fake", "text": "reply",
                      "inputTokens": 10, "cachedInputTokens": 0, "outputTokens": 5}
    body = model.requests()[-1]["body"]
    texts = [part.get("text") for item in body["input"] if item.get("type") == "message"
             for part in item.get("content") or []]
    assert texts[-1] == "sum up" and "hello" in texts and "reply" in texts  # the whole context, then the prompt
    assert (await client.call("thread/read", {"threadId": tid, "includeTurns": True}))["thread"]["turns"] == before
    assert await _error(client, "thread/sample", {"threadId": tid, "expectedTurnId": MISSING, "prompt": "x"}) == \
        _invalid("sample source turn must be the latest finished turn")
    assert await _error(client, "thread/sample", {"threadId": MISSING, "expectedTurnId": MISSING,
                                                  "prompt": "x"}) == _invalid("thread/sample requires a loaded source")


async def test_prepare_approved_plan_puts_the_plan_in_the_next_request(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    client, model = await _client(app_server, fake_model, codex_home)
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    answer = await client.call("thread/prepareApprovedPlan", {"threadId": tid, "markdown": "# Plan\n1. ship"})
    assert answer == {"prompt": "Implement the plan."}
    assert await _error(client, "thread/prepareApprovedPlan", {"threadId": tid, "markdown": "x",
                                                               "attachmentPath": "plan.md"}) == {
        "code": -32602, "message": "`attachmentPath` must be absolute on the app server"}
    assert await _error(client, "thread/prepareApprovedPlan", {"threadId": MISSING, "markdown": "x"}) == _invalid(
        f"thread not found: {MISSING}")
    await run_turn(client, tid, answer["prompt"])
    plans = [item for item in model.requests()[-1]["body"]["input"] if item.get("name") == "proposed_plan"]
    assert [(p["type"], p["namespace"], p["output"]) for p in plans] == [
        ("function_call_output", "agent", "# Plan\n1. ship")]


async def test_turn_settings_update_needs_the_feature_and_a_running_turn(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    client, _ = await _client(app_server, fake_model, codex_home)
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    turn = await run_turn(client, tid, "hello")
    params = {"threadId": tid, "turnId": turn["id"], "model": "other"}
    assert await _error(client, "turn/settings/update", params) == _invalid(
        "turn settings updates require the step_model_switching feature")
    assert await _error(client, "turn/settings/update", {"threadId": MISSING, "turnId": MISSING}) == _invalid(
        f"thread not found: {MISSING}")

    feature = "[features]\nstep_model_switching = true\n"
    enabled, _ = await _client(app_server, fake_model, codex_home.parent / "on", extra=feature)
    other = (await enabled.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    done = await run_turn(enabled, other, "hello")
    assert await enabled.call("turn/settings/update", {"threadId": other, "turnId": done["id"]}) == {
        "status": "targetUnavailable"}


async def test_realtime_without_a_voice_service_answers_as_codex_without_an_api_key(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    client, _ = await _client(app_server, fake_model, codex_home)
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    assert await client.call("thread/realtime/start", {"threadId": tid, "outputModality": "text"}) == {}
    note = await client.wait_notification("thread/realtime/error")
    assert note["params"] == {"threadId": tid, "message": "realtime conversation requires API key auth"}

    assert await client.call("thread/realtime/appendText", {"threadId": tid, "text": "hi"}) == {}
    await client.wait_notification(
        "thread/status/changed", lambda p: p["threadId"] == tid and p["status"] == {"type": "systemError"})
    error = await client.wait_notification("error", lambda p: p["threadId"] == tid)
    assert error["params"]["error"]["message"] == "conversation is not running"
    assert error["params"]["error"]["codexErrorInfo"] == "badRequest" and error["params"]["willRetry"] is False
    audio = {"data": "AAAA", "numChannels": 1, "sampleRate": 24000}
    assert await client.call("thread/realtime/appendAudio", {"threadId": tid, "audio": audio}) == {}
    assert await client.call("thread/realtime/appendSpeech", {"threadId": tid, "text": "hi"}) == {}
    assert await client.call("thread/realtime/stop", {"threadId": tid}) == {}
    closed = await client.wait_notification("thread/realtime/closed")
    assert closed["params"] == {"threadId": tid, "reason": "requested"}
    assert len(client.notifications("error")) == 3

    for method, params in (("thread/realtime/start", {"outputModality": "text"}),
                           ("thread/realtime/appendText", {"text": "x"}), ("thread/realtime/stop", {})):
        assert await _error(client, method, {"threadId": MISSING, **params}) == _invalid(
            f"thread not found: {MISSING}")
    bad_role = await _error(client, "thread/realtime/appendText", {"threadId": tid, "text": "x", "role": "bogus"})
    assert bad_role["message"].startswith("Invalid request: unknown variant `bogus`")  # pycodex adds "for `role`"


async def test_realtime_with_an_api_key_names_the_missing_voice_client(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    client, _ = await _client(app_server, fake_model, codex_home)
    (codex_home / "auth.json").write_text(json.dumps({"OPENAI_API_KEY": "sk-test", "auth_mode": "apikey"}))
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    assert await client.call("thread/realtime/start", {"threadId": tid, "outputModality": "audio"}) == {}
    note = await client.wait_notification("thread/realtime/error")
    assert "no client for OpenAI's realtime voice service" in note["params"]["message"]


WAIT_FOR_GO = "for i in $(seq 200); do [ -e go ] && break; sleep 0.05; done; echo ran"


async def running_turn(client: Any, workspace: Path) -> tuple[str, str]:
    """A thread whose turn is running a command that waits for ``workspace/go`` (bounded: 10 s)."""
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    turn = (await client.call("turn/start", {"threadId": tid, "input": [{"type": "text", "text": "go"}]}))["turn"]
    await client.wait_notification("item/started", lambda p: p["item"]["type"] == "commandExecution", timeout=15)
    return tid, turn["id"]


def step_script() -> dict[str, Any]:
    """A model that runs the waiting command, then answers: two requests in one turn."""
    return {"responses": [{"output": [exec_call("c1", WAIT_FOR_GO)]}, {"output": [message("done")]}]}


def catalog_model_config(home: Path, url: str) -> None:
    """``home``'s config: a model the catalog knows (gpt-5.5), with step_model_switching on."""
    model_config(home, url, extra="[features]\nstep_model_switching = true\n")
    path = home / "config.toml"
    path.write_text(path.read_text().replace('model = "mock-model"', 'model = "gpt-5.5"'))


async def test_turn_settings_update_applies_to_the_running_turns_later_requests(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model(step_script())
    catalog_model_config(codex_home, model.url)
    client = await app_server(experimental=True, codex_home=codex_home)
    tid, turn_id = await running_turn(client, workspace)
    update = "turn/settings/update"
    assert await _error(client, update, {"threadId": tid, "turnId": turn_id, "model": "no-such-model"}) == _invalid(
        "the destination model has only fallback metadata")
    assert await _error(client, update, {"threadId": tid, "turnId": turn_id, "approvalsReviewer": "user"}) == \
        _invalid("turn settings updates of approvalsReviewer or environments are not supported by pycodex yet: "
                 "the running turn keeps its reviewer and environments")
    assert await client.call(update, {"threadId": tid, "turnId": turn_id, "effort": "high",
                                      "summary": "concise"}) == {"status": "applied"}
    assert await client.call(update, {"threadId": tid, "turnId": MISSING}) == {"status": "targetUnavailable"}
    (workspace / "go").touch()
    await client.wait_notification("turn/completed", timeout=20)
    first, second = (request["body"]["reasoning"] for request in model.requests())
    assert first.get("effort") != "high" and first["summary"] == "auto"  # sent before the update
    assert second == {"effort": "high", "summary": "concise"}
    read = (await client.call("thread/read", {"threadId": tid}))["thread"]
    assert read["reasoningEffort"] is None  # the thread's own settings (and later turns) are unchanged


async def test_turn_settings_update_on_a_model_without_metadata_is_refused(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model(step_script())
    model_config(codex_home, model.url, extra="[features]\nstep_model_switching = true\n")
    client = await app_server(experimental=True, codex_home=codex_home)
    tid, turn_id = await running_turn(client, workspace)
    assert await _error(client, "turn/settings/update", {"threadId": tid, "turnId": turn_id}) == _invalid(
        "the active model has only fallback metadata")
    (workspace / "go").touch()
    await client.wait_notification("turn/completed", timeout=20)


async def test_sample_cancel_stops_an_in_flight_sample(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model({"responses": [{"output": [message("reply")]},
                                            {"output": [message("slow")], "stall_after": 1, "stall_s": 10},
                                            {"output": [message("after")]}]})
    model_config(codex_home, model.url)
    client = await app_server(experimental=True, codex_home=codex_home)
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    turn = await run_turn(client, tid, "hello")
    params = {"threadId": tid, "expectedTurnId": turn["id"], "prompt": "p"}
    await client.send({"id": "s1", "method": "thread/sample", "params": params})
    await model_requests(model, 2)  # the sample is streaming (and stalled) before it is cancelled
    assert await client.call("thread/sample/cancel", {"requestId": "s1"}) == {}
    answer = await client.wait_response("s1", timeout=15)
    assert as_codex(answer["error"]) == {"code": -32603, "message": "sample canceled"}
    assert await client.call("thread/sample/cancel", {"requestId": "s1"}) == {}  # nothing in flight: still {}
    assert (await client.call("thread/sample", params))["text"] == "after"
