"""turn/start's and turn/steer's clientUserMessageId becomes the clientId of the user message it opens, as in
Codex 0.169: on the live item, in thread/read and thread/items/list, for a steer and for a turn/start merged
into a running turn; repeated and empty ids are kept as given. Passes against the binary too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.fake_model import message, model_config, run_turn


async def _client(app_server: Any, fake_model: Any, codex_home: Path, responses: list[Any]) -> Any:
    model = await fake_model({"responses": responses, "when_exhausted": "repeat_last"})
    model_config(codex_home, model.url)
    return await app_server()


def _user_messages(thread: dict[str, Any]) -> list[list[tuple[str, Any]]]:
    return [[(i["content"][0]["text"], i["clientId"]) for i in turn["items"] if i["type"] == "userMessage"]
            for turn in thread["turns"]]


async def test_client_user_message_id_is_the_items_client_id(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    client = await _client(app_server, fake_model, codex_home, [{"output": [message("ok")]}])
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await run_turn(client, tid, "one", clientUserMessageId="client-1")
    started = await client.wait_notification("item/started", lambda p: p["item"]["type"] == "userMessage")
    completed = await client.wait_notification("item/completed", lambda p: p["item"]["type"] == "userMessage")
    assert started["params"]["item"]["clientId"] == completed["params"]["item"]["clientId"] == "client-1"
    await run_turn(client, tid, "two")
    await run_turn(client, tid, "three", clientUserMessageId="client-1")  # not checked for uniqueness
    await run_turn(client, tid, "four", clientUserMessageId="")
    thread = (await client.call("thread/read", {"threadId": tid, "includeTurns": True}))["thread"]
    assert _user_messages(thread) == [[("one", "client-1")], [("two", None)], [("three", "client-1")],
                                      [("four", "")]]
    listed = (await client.call("thread/items/list", {"threadId": tid}))["data"]
    assert [e["item"]["clientId"] for e in listed if e["item"]["type"] == "userMessage"] == [
        "client-1", None, "client-1", ""]


async def test_steered_and_merged_inputs_keep_their_client_ids(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    # The first reply is slow (700 ms between events), so the turn is still running for the next requests.
    client = await _client(app_server, fake_model, codex_home,
                           [{"output": [message("slow")], "delay_ms": 700}, {"output": [message("after")]}])
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    turn = (await client.call("turn/start", {"threadId": tid, "input": [{"type": "text", "text": "first"}],
                                             "clientUserMessageId": "c-first"}))["turn"]
    await client.wait_notification("turn/started")
    await client.call("turn/steer", {"threadId": tid, "expectedTurnId": turn["id"], "clientUserMessageId": "c-steer",
                                     "input": [{"type": "text", "text": "steer"}]})
    merged = await client.call("turn/start", {"threadId": tid, "input": [{"type": "text", "text": "merged"}],
                                              "clientUserMessageId": "c-merged"})
    assert merged["turn"]["id"] == turn["id"]
    await client.wait_notification("turn/completed", timeout=30)
    thread = (await client.call("thread/read", {"threadId": tid, "includeTurns": True}))["thread"]
    assert _user_messages(thread) == [[("first", "c-first"), ("steer", "c-steer"), ("merged", "c-merged")]]
