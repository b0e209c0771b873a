"""Items of one turn are keyed by id, as in Codex 0.169: a later item with the id of an earlier one replaces it in
place in the turn (thread/read, thread/items/list), while the live notifications announce both. The fake model
names unnamed items item_0, item_1... per response, so the reasoning of the first response and the message of
the second share item_0. Passes against the binary too (PYCODEX_TEST_TARGET=codex)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.fake_model import exec_call, message, model_config, run_turn


async def test_a_reused_item_id_replaces_the_earlier_item(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    script = {"responses": [{"output": [{"type": "reasoning", "summary": ["**Plan** look"]}, exec_call("c1", "true")]},
                            {"output": [message("done")]}], "when_exhausted": "repeat_last"}
    model = await fake_model(script)
    model_config(codex_home, model.url)
    client = await app_server()
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await run_turn(client, tid, "go", timeout=30)
    live = [(n["params"]["item"]["type"], n["params"]["item"]["id"]) for n in client.notifications("item/completed")]
    assert live[1:] == [("reasoning", "item_0"), ("commandExecution", "c1"), ("agentMessage", "item_0")]
    turn = (await client.call("thread/read", {"threadId": tid, "includeTurns": True}))["thread"]["turns"][0]
    assert [(i["type"], i["id"]) for i in turn["items"][1:]] == [("agentMessage", "item_0"), ("commandExecution", "c1")]
    assert turn["items"][1]["text"] == "done"
