"""thread/shellCommand: the user's command runs as its own turn with one userShell commandExecution item
(as Codex 0.169), and the model sees the command and its output on the next turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.fake_model import message, model_config, run_turn


async def test_shell_command_turn_and_history(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([{"output": [message("ok")]}])
    model_config(codex_home, model.url)
    client = await app_server()
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    (workspace / "marker.txt").write_text("from the workspace\n")

    assert await client.call("thread/shellCommand", {"threadId": tid, "command": "cat marker.txt | tr a-z A-Z"}) == {}
    started = (await client.wait_notification("item/started"))["params"]["item"]
    assert started["type"] == "commandExecution" and started["source"] == "userShell"
    assert started["cwd"] == str(workspace) and started["commandActions"][0]["command"] == "cat marker.txt | tr a-z A-Z"
    done = (await client.wait_notification("item/completed", lambda p: p["item"]["id"] == started["id"]))
    item = done["params"]["item"]
    assert (item["status"], item["exitCode"], item["aggregatedOutput"]) == ("completed", 0, "FROM THE WORKSPACE\n")
    delta = await client.wait_notification("item/commandExecution/outputDelta")
    assert delta["params"]["itemId"] == item["id"]
    turn = (await client.wait_notification("turn/completed"))["params"]["turn"]
    assert (turn["status"], turn["items"], turn["itemsView"]) == ("completed", [], "notLoaded")

    await run_turn(client, tid, "what did I run?")
    texts = [part.get("text", "") for i in model.requests()[0]["body"]["input"] if i.get("type") == "message"
             for part in i.get("content") or []]
    assert any("cat marker.txt" in t and "FROM THE WORKSPACE" in t for t in texts)


async def test_shell_command_failure_and_bad_params(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([{"output": [message("ok")]}])
    model_config(codex_home, model.url)
    client = await app_server()
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    assert await client.call("thread/shellCommand", {"threadId": tid, "command": "exit 3"}) == {}
    item = (await client.wait_notification("item/completed"))["params"]["item"]
    assert (item["status"], item["exitCode"]) == ("failed", 3)
    await client.wait_notification("turn/completed")
    empty = await client.request("thread/shellCommand", {"threadId": tid, "command": "  "})
    assert empty["error"]["code"] == -32602
    missing = "00000000-0000-7000-8000-000000000000"
    unknown = await client.request("thread/shellCommand", {"threadId": missing, "command": "true"})
    assert unknown["error"] == {"code": -32600, "data": {"appErrorCode": "thread_not_found", "threadId": missing},
                                "message": f"thread not found: {missing}"}
