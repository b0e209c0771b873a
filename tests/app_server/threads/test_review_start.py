"""review/start (inline): the answer carries the turn with the user-facing hint, the turn runs the model between
an enteredReviewMode and an exitedReviewMode item, a structured review is rendered, and bad targets get
Codex 0.169's errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app_server.handlers.review import render_review
from tests.support.fake_model import message, model_config

MISSING = "00000000-0000-7000-8000-000000000000"
FINDINGS = {
    "findings": [{"title": "[P1] Off by one", "body": "The loop skips the last line.",
                  "code_location": {"absolute_file_path": "/w/a.py", "line_range": {"start": 3, "end": 4}}}],
    "overall_correctness": "patch is incorrect", "overall_explanation": "One bug.",
}


async def _items_of_turn(client: Any, turn_id: str) -> list[dict[str, Any]]:
    done = await client.wait_notification("turn/completed", lambda p: p["turn"]["id"] == turn_id, timeout=20)
    assert done["params"]["turn"]["status"] == "completed"
    return [n["params"]["item"] for n in client.notifications("item/completed") if n["params"]["turnId"] == turn_id]


async def test_review_turn_items_and_rendered_review(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([{"output": [message(json.dumps(FINDINGS))]}])
    model_config(codex_home, model.url)
    client = await app_server()
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    answer = await client.call("review/start", {"threadId": tid, "target": {"type": "uncommittedChanges"}})
    turn = answer["turn"]
    assert answer["reviewThreadId"] == tid and turn["status"] == "inProgress"
    assert [(i["type"], i["id"], i["content"][0]["text"]) for i in turn["items"]] == [
        ("userMessage", turn["id"], "current changes")]
    items = await _items_of_turn(client, turn["id"])
    assert [i["type"] for i in items] == ["enteredReviewMode", "userMessage", "agentMessage", "exitedReviewMode"]
    assert items[0]["review"] == "current changes"
    assert items[-1]["review"] == render_review(json.dumps(FINDINGS))
    assert "One bug." in items[-1]["review"] and "/w/a.py:3-4" in items[-1]["review"]
    sent = model.requests()[0]["body"]["input"][-1]["content"][0]["text"]
    assert "git diff" in sent  # the model is asked to look at the working tree


async def test_review_plain_text_and_bad_targets(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([{"output": [message("Looks fine.")]}])
    model_config(codex_home, model.url)
    client = await app_server()
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    for target, field in (({"type": "custom", "instructions": " "}, "instructions"),
                          ({"type": "baseBranch", "branch": ""}, "branch"), ({"type": "commit", "sha": ""}, "sha")):
        refused = await client.request("review/start", {"threadId": tid, "target": target})
        assert refused["error"] == {"code": -32600, "data": {"appErrorCode": "invalid_request"},
                                    "message": f"{field} must not be empty"}
    detached = await client.request("review/start", {"threadId": tid, "delivery": "detached",
                                                      "target": {"type": "uncommittedChanges"}})
    assert "unknown variant `detached`" in detached["error"]["message"]  # Codex 0.169 takes inline only
    unknown = await client.request("review/start", {"threadId": MISSING, "target": {"type": "uncommittedChanges"}})
    assert unknown["error"] == {"code": -32600, "data": {"appErrorCode": "thread_not_found", "threadId": MISSING},
                                "message": f"thread not found: {MISSING}"}
    commit = await client.call("review/start", {"threadId": tid, "target": {"type": "commit", "sha": "0123456789ab",
                                                                          "title": "Fix it"}})
    assert commit["turn"]["items"][0]["content"][0]["text"] == "commit 0123456: Fix it"
    items = await _items_of_turn(client, commit["turn"]["id"])
    assert (items[0]["review"], items[-1]["review"]) == ("commit 0123456: Fix it", "Looks fine.")
