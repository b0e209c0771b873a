"""thread/compact/start: a real compaction turn through the fake model, notifications shaped as Codex 0.169
sends them, and the next turn's model request carrying the summary instead of the old exchange."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.fake_model import message, model_config, run_turn

MISSING = "00000000-0000-7000-8000-000000000000"


def _texts(request: dict[str, Any]) -> list[str]:
    return [part.get("text", "") for item in request["body"]["input"] if item.get("type") == "message"
            for part in item.get("content") or []]


async def test_compaction_replaces_history_with_summary(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    script = [{"output": [message("first answer")]}, {"output": [message("second answer")]},
              {"output": [message("SUMMARY OF WORK")]}, {"output": [message("third answer")]}]
    model = await fake_model(script)
    model_config(codex_home, model.url)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    earlier = {(await run_turn(client, thread_id, text))["id"] for text in ("one", "two")}

    assert await client.call("thread/compact/start", {"threadId": thread_id}) == {}
    started = await client.wait_notification("turn/started", lambda p: p["turn"]["id"] not in earlier)
    turn_id = started["params"]["turn"]["id"]
    item = (await client.wait_notification("item/started", lambda p: p["turnId"] == turn_id))["params"]["item"]
    assert item["type"] == "contextCompaction" and item["completedAtMs"] is None
    done = await client.wait_notification("item/completed", lambda p: p["turnId"] == turn_id)
    assert done["params"]["item"]["id"] == item["id"]
    assert done["params"]["item"]["type"] == "contextCompaction"
    completed = (await client.wait_notification("turn/completed", lambda p: p["turn"]["id"] == turn_id))
    assert completed["params"]["turn"]["status"] == "completed"
    assert completed["params"]["turn"]["items"] == []

    summarising = model.requests()[2]
    assert summarising["body"]["tools"] == []
    texts = _texts(summarising)
    assert "first answer" in texts and "second answer" in texts  # the whole history is summarised

    third = await run_turn(client, thread_id, "three")
    assert [i["text"] for i in third["items"] if i["type"] == "agentMessage"] == ["third answer"]
    after = _texts(model.requests()[3])
    assert any("SUMMARY OF WORK" in t for t in after)
    assert "first answer" not in after and "second answer" not in after
    users = [t for t in after if t in ("one", "two", "three")]
    assert users == ["one", "two", "three"]


async def test_compact_unknown_thread(app_server: Any) -> None:
    client = await app_server()
    answer = await client.request("thread/compact/start", {"threadId": MISSING})
    assert answer["error"] == {"code": -32600, "data": {"appErrorCode": "thread_not_found", "threadId": MISSING},
                               "message": f"thread not found: {MISSING}"}
