"""thread/queue/*: a submission to an idle thread starts at once, later ones wait and start when the
thread goes idle; errors and answers as Codex 0.169 gives them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.fake_model import message, model_config


def _texts(request: dict[str, Any]) -> list[str]:
    return [part.get("text", "") for item in request["body"]["input"] if item.get("type") == "message"
            for part in item.get("content") or []]


async def test_queue_runs_submissions_in_order(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([{"output": [message("a1")]}, {"output": [message("a2")]}])
    model_config(codex_home, model.url)
    client = await app_server(experimental=True)
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    assert await client.call("thread/queue/list", {"threadId": tid}) == {"data": [], "nextCursor": None}
    empty = await client.request("thread/queue/start", {"threadId": tid})
    assert empty["error"] == {"code": -32600, "data": {"appErrorCode": "invalid_request"},
                              "message": "queue is empty"}

    def add(cid: str, text: str) -> Any:
        return client.call("thread/queue/add", {"threadId": tid, "clientUserMessageId": cid,
                                                "input": [{"type": "text", "text": text}]})

    first = (await add("c1", "later"))["queuedSubmission"]
    assert first["clientUserMessageId"] == "c1" and first["input"][0]["text"] == "later"
    await client.wait_notification("thread/queue/changed", lambda p: p == {"threadId": tid})
    second = (await add("c2", "later2"))["queuedSubmission"]  # the first turn is active: this one waits
    listed = await client.call("thread/queue/list", {"threadId": tid})
    assert [e["id"] for e in listed["data"]] == [second["id"]]

    missing = await client.request("thread/queue/update", {"threadId": tid, "queuedSubmissionId": "nope",
                                                            "input": [{"type": "text", "text": "x"}]})
    assert missing["error"] == {"code": -32600, "data": {"appErrorCode": "invalid_request"},
                                "message": "queued submission not found: nope"}
    reorder = await client.request("thread/queue/reorder", {"threadId": tid, "queuedSubmissionIds": []})
    assert reorder["error"] == {"code": -32600, "data": {"appErrorCode": "invalid_request"},
                                "message": "queue reorder must include every queued submission exactly once"}
    assert await client.call("thread/queue/delete", {"threadId": tid, "queuedSubmissionId": "nope"}) == {
        "deleted": False}

    done: list[dict[str, Any]] = []
    for _ in range(2):
        note = await client.wait_notification("turn/completed", lambda p: p["turn"]["id"] not in
                                              {d["turn"]["id"] for d in done}, timeout=20)
        done.append(note["params"])
    assert [d["turn"]["status"] for d in done] == ["completed", "completed"]
    user_items = [n["params"]["item"] for n in client.notifications("item/completed")
                  if n["params"]["item"]["type"] == "userMessage"]
    assert [i["clientId"] for i in user_items] == ["c1", "c2"]
    requests = model.requests()
    assert "later" in _texts(requests[0]) and "later2" in _texts(requests[1])
    assert (await client.call("thread/queue/list", {"threadId": tid}))["data"] == []


async def test_queue_update_delete_reorder_while_busy(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([{"output": [message("a1")]}, {"output": [message("a2")]}])
    model_config(codex_home, model.url)
    client = await app_server(experimental=True)
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    ids = []
    for cid in ("c1", "c2", "c3"):
        entry = await client.call("thread/queue/add", {"threadId": tid, "clientUserMessageId": cid,
                                                       "input": [{"type": "text", "text": cid}]})
        ids.append(entry["queuedSubmission"]["id"])
    waiting = ids[1:]
    assert await client.call("thread/queue/reorder", {"threadId": tid,
                                                      "queuedSubmissionIds": waiting[::-1]}) == {}
    updated = await client.call("thread/queue/update", {"threadId": tid, "queuedSubmissionId": waiting[0],
                                                        "input": [{"type": "text", "text": "edited"}]})
    assert updated["queuedSubmission"]["input"][0]["text"] == "edited"
    assert await client.call("thread/queue/delete", {"threadId": tid, "queuedSubmissionId": waiting[1]}) == {
        "deleted": True}
    seen: set[str] = set()
    for _ in range(2):
        note = await client.wait_notification("turn/completed", lambda p: p["turn"]["id"] not in seen, timeout=20)
        seen.add(note["params"]["turn"]["id"])
    requests = model.requests()
    assert len(requests) == 2 and "edited" in _texts(requests[1]) and "c3" not in _texts(requests[1])
