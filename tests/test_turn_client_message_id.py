"""`turn/start {clientUserMessageId}` comes back as the user message item's `clientId` (in item/started, item/completed
and the recorded turn), as in Codex 0.169: the TUI sends one with every prompt. Without it the clientId is null."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.fake_model import message, model_config, run_turn


async def test_the_user_message_carries_the_client_message_id(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model({"responses": [{"output": [message("reply")]}], "when_exhausted": "repeat_last"})
    model_config(codex_home, model.url)
    client = await app_server(codex_home=codex_home)
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await run_turn(client, thread_id, "with id", clientUserMessageId="client-msg-1")
    await run_turn(client, thread_id, "without id")

    def client_ids(method: str) -> list[Any]:
        return [n["params"]["item"]["clientId"] for n in client.notifications(method)
                if n["params"]["item"]["type"] == "userMessage"]

    assert client_ids("item/started") == ["client-msg-1", None]
    assert client_ids("item/completed") == ["client-msg-1", None]
    turns = (await client.call("thread/read", {"threadId": thread_id, "includeTurns": True}))["thread"]["turns"]
    recorded = [i["clientId"] for t in turns for i in t["items"] if i["type"] == "userMessage"]
    assert recorded == ["client-msg-1", None]
