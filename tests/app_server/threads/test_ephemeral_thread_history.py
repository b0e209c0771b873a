"""An ephemeral thread keeps no history or read state to hand out, as in Codex 0.169: `thread/turns/list` refuses it
(-32600 "ephemeral threads do not support thread/turns/list") before and after its first turn, and its finished turns
send no `thread/readState/changed`. The TUI meets both with its ephemeral title threads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.fake_model import message, model_config, run_turn

REFUSAL = {"code": -32600, "data": {"appErrorCode": "invalid_request"},
           "message": "ephemeral threads do not support thread/turns/list"}


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


async def test_an_ephemeral_turn_reports_no_read_state(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    """Codex sends `thread/readState/changed` for a persistent thread's finished turn, none for an ephemeral one's
    (the TUI's title threads)."""
    model = await fake_model({"responses": [{"output": [message("reply")]}], "when_exhausted": "repeat_last"})
    model_config(codex_home, model.url)
    client = await app_server(codex_home=codex_home, experimental=True)
    ephemeral = (await client.call("thread/start", {"cwd": str(workspace), "ephemeral": True}))["thread"]["id"]
    kept = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await run_turn(client, ephemeral, "hello")
    await run_turn(client, kept, "hello")
    assert [n["params"]["threadId"] for n in client.notifications("thread/readState/changed")] == [kept]
