"""thread/settings/update: {} as Codex 0.169 answers, thread/settings/updated only when something changed,
and the next turn's model request uses the new settings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app_server.protocol.base import to_wire
from app_server.protocol.notifications import parse_notification
from tests.support.fake_model import message, model_config, run_turn


async def test_settings_update_applies_to_next_turn(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([{"output": [message("ok")]}])
    model_config(codex_home, model.url)
    client = await app_server(experimental=True)
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    assert await client.call("thread/settings/update", {"threadId": tid}) == {}
    assert await client.call("thread/settings/update", {"threadId": tid, "model": "other-model"}) == {}
    note = (await client.wait_notification("thread/settings/updated"))["params"]
    assert note["threadId"] == tid
    settings = note["threadSettings"]
    assert (settings["model"], settings["cwd"], settings["approvalPolicy"]) == ("other-model", str(workspace), "never")
    assert settings["collaborationMode"]["settings"]["model"] == "other-model"
    # the schema's model (Codex's ThreadSettings) describes exactly what the server sent, in its key order
    assert json.dumps(to_wire(parse_notification("thread/settings/updated", note))) == json.dumps(note)
    await run_turn(client, tid, "hi")
    assert model.requests()[0]["body"]["model"] == "other-model"


async def test_settings_update_unknown_thread(app_server: Any) -> None:
    client = await app_server(experimental=True)
    missing = "00000000-0000-7000-8000-000000000000"
    answer = await client.request("thread/settings/update", {"threadId": missing})
    assert answer["error"] == {"code": -32600, "data": {"appErrorCode": "thread_not_found", "threadId": missing},
                               "message": f"thread not found: {missing}"}
