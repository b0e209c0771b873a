"""thread/revert: the turn named and every later one are dropped, the model history goes back to where it
was when that turn started, and the wire follows Codex 0.169 (notLoaded, idle, the answer, thread/reverted)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app_server.store import ThreadStore
from tests.support.fake_model import message, model_config, run_turn

MISSING = "00000000-0000-7000-8000-000000000000"


def _texts(request: dict[str, Any]) -> list[str]:
    return [part.get("text", "") for item in request["body"]["input"] if item.get("type") == "message"
            for part in item.get("content") or []]


async def test_revert_drops_turns_and_history(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    script = [{"output": [message("first answer")]}, {"output": [message("second answer")]},
              {"output": [message("third answer")]}]
    model = await fake_model(script)
    model_config(codex_home, model.url)
    client = await app_server()
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    first = await run_turn(client, tid, "one")
    second = await run_turn(client, tid, "two")

    unknown = await client.request("thread/revert", {"threadId": tid, "beforeTurnId": MISSING})
    assert unknown["error"] == {"code": -32600, "data": {"appErrorCode": "turn_not_found", "turnId": MISSING},
                                "message": f"turn not found: {MISSING}"}
    answer = await client.call("thread/revert", {"threadId": tid, "beforeTurnId": second["id"]})
    assert answer["thread"]["id"] == tid and answer["thread"]["turns"] == []
    assert first["id"] in answer["turnsBackwardsCursor"] and answer["itemsBackwardsCursor"]
    await client.wait_notification("thread/reverted", lambda p: p == {"threadId": tid})
    await client.wait_notification("thread/status/changed", lambda p: p["status"] == {"type": "notLoaded"})
    listed = await client.call("thread/turns/list", {"threadId": tid})
    assert [t["id"] for t in listed["data"]] == [first["id"]]

    await run_turn(client, tid, "three")
    texts = _texts(model.requests()[2])
    assert "first answer" in texts and "three" in texts
    assert "two" not in texts and "second answer" not in texts

    stored = ThreadStore(codex_home, reconcile=False)
    try:
        loaded = stored.load_thread(tid)
    finally:
        stored.close()
    assert [t["id"] for t in loaded.turns][:1] == [first["id"]] and second["id"] not in [t["id"] for t in loaded.turns]
    assert not any("second answer" in str(entry) for entry in loaded.history)

    missing = await client.request("thread/revert", {"threadId": MISSING, "beforeTurnId": first["id"]})
    assert missing["error"] == {"code": -32600, "data": {"appErrorCode": "thread_not_found", "threadId": MISSING},
                                "message": f"thread not found: {MISSING}"}
