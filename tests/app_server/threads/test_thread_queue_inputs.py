"""What thread/queue/add and thread/queue/update refuse to queue, in Codex 0.169's words: no input, remote image
URLs, unreadable local images (update checks the input before it looks the submission up). Passes against the
binary too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.fake_model import ok_model, thread_with_a_turn

NIL = "00000000-0000-7000-8000-000000000000"
EMPTY = "only user input can be added to the user-message queue"
REMOTE = "remote image URLs are not supported; use an inline data URL instead"


async def test_queue_refuses_what_it_cannot_hold(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    await ok_model(fake_model, codex_home)
    client = await app_server(experimental=True)
    tid = await thread_with_a_turn(client, workspace)

    async def add(parts: list[Any], client_id: str) -> dict[str, Any]:
        return await client.request("thread/queue/add",
                                    {"threadId": tid, "input": parts, "clientUserMessageId": client_id})

    text = {"type": "text", "text": "ok"}
    missing = workspace / "missing.png"
    for parts, error in (
        ([], EMPTY),
        ([text, {"type": "image", "url": "https://example.com/a.png"}], REMOTE),
        ([{"type": "image", "url": "HTTP://example.com/a.png"}], REMOTE),
        ([{"type": "localImage", "path": str(missing)}],
         "local queued attachment is invalid: No such file or directory (os error 2)"),
    ):
        assert (await add(parts, "refused"))["error"] == {"code": -32600, "data": {"appErrorCode": "invalid_request"},
                                                          "message": error}
        update = {"threadId": tid, "queuedSubmissionId": NIL, "input": parts}
        assert (await client.request("thread/queue/update", update))["error"]["message"] == error
    assert (await client.call("thread/queue/list", {"threadId": tid}))["data"] == []

    inline = {"type": "image", "url": "data:image/png;base64,iVBORw0KGgo="}
    assert "queuedSubmission" in (await add([text, inline], "inline")).get("result", {})
