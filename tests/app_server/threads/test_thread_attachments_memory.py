"""thread/attachment/*, thread/attachmentOwner/list, memory/status and memory/reset, answered as Codex 0.169
answers for a local thread (captured from the binary with the fake model)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.fake_model import message, model_config, run_turn

MISSING = "00000000-0000-7000-8000-000000000000"


async def test_attachments_add_list_owner_remove(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([{"output": [message("hi")]}])
    model_config(codex_home, model.url)
    client = await app_server()
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await run_turn(client, tid, "hello")
    key = {"threadId": tid, "attachmentType": "pr", "identityKey": "k1"}
    assert await client.call("thread/attachment/list", {"threadId": tid}) == {"data": [], "nextCursor": None}

    first = await client.call("thread/attachment/add", {**key, "payload": {"a": 1}})
    assert first["outcome"] == "created" and first["attachment"]["payload"] == {"a": 1}
    attachment = first["attachment"]
    note = await client.wait_notification("thread/attachment/updated")
    assert note["params"] == {**key, "attachmentId": attachment["id"], "operation": "created"}
    again = await client.call("thread/attachment/add", {**key, "payload": {"a": 2}})
    assert again == {"outcome": "existing", "attachment": attachment}  # the first payload stays
    assert await client.call("thread/attachment/list", {"threadId": tid}) == {"data": [attachment],
                                                                             "nextCursor": None}
    owners = await client.call("thread/attachmentOwner/list", {"attachmentType": "pr", "identityKey": "k1"})
    assert owners == {"data": [{"threadId": tid, "archived": False}], "nextCursor": None}
    none = await client.call("thread/attachmentOwner/list", {"attachmentType": "pr", "identityKey": "k2"})
    assert none["data"] == []

    assert await client.call("thread/attachment/remove", key) == {}
    gone = await client.wait_notification("thread/attachment/updated", lambda p: p["operation"] == "deleted")
    assert gone["params"]["attachmentId"] == attachment["id"]
    assert await client.call("thread/attachment/remove", key) == {}
    assert (await client.call("thread/attachment/list", {"threadId": tid}))["data"] == []
    assert await client.call("thread/attachment/list", {"threadId": MISSING}) == {"data": [], "nextCursor": None}
    missing = await client.request("thread/attachment/add", {**key, "threadId": MISSING, "payload": 1})
    assert missing["error"]["code"] == -32600


async def test_memory_status_and_reset(app_server: Any) -> None:
    client = await app_server(experimental=True)
    assert await client.call("memory/status", {}) == {"v2ConsolidatedThreads": 0, "v2Ready": True}
    assert await client.call("memory/reset", None) == {}
