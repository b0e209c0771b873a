"""`thread/turns/list` on an ephemeral thread is refused as Codex 0.169 refuses it (-32600 "ephemeral threads do
not support thread/turns/list"), before and after its first turn: the TUI asks it for every loaded thread,
its own ephemeral title threads included. A persistent thread still lists its turns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.fake_model import message, model_config, run_turn

REFUSAL = {"code": -32600, "message": "ephemeral threads do not support thread/turns/list"}


async def test_turns_list_refuses_ephemeral_threads(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model({"responses": [{"output": [message("reply")]}], "when_exhausted": "repeat_last"})
    model_config(codex_home, model.url)
    client = await app_server(codex_home=codex_home, experimental=True)
    ephemeral = (await client.call("thread/start", {"cwd": str(workspace), "ephemeral": True}))["thread"]["id"]
    kept = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]

    before = await client.request("thread/turns/list", {"threadId": ephemeral})
    assert before["error"] == REFUSAL
    await run_turn(client, ephemeral, "hello")
    after = await client.request("thread/turns/list", {"threadId": ephemeral})
    assert after["error"] == REFUSAL

    turn = await run_turn(client, kept, "hello")
    listed = await client.call("thread/turns/list", {"threadId": kept})
    assert [t["id"] for t in listed["data"]] == [turn["id"]]
