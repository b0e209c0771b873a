"""The view_image tool as Codex 0.169 answers it (recorded from the real binary).

Success: an `imageView` item (id = call id, absolute path) started and completed, and a function_call_output
whose output is a content list holding the one `input_image`. Failures answer the model with Codex's texts
and emit no item.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.fake_model import message, model_config
from tests.support.images import GIF_1X1, data_url, decode, png


def _view(call_id: str, path: str) -> dict[str, Any]:
    return {"type": "function_call", "name": "view_image", "call_id": call_id,
            "arguments": json.dumps({"path": path})}


async def _run(app_server: Any, fake_model: Any, codex_home: Path, workspace: Path,
               paths: list[str]) -> tuple[Any, Any, list[dict[str, Any]]]:
    """A turn whose model views each of ``paths`` in turn, then answers; returns client, model, outputs."""
    script = [{"output": [_view(f"call_{i}", p)]} for i, p in enumerate(paths)]
    model = await fake_model([*script, {"output": [message("seen")]}])
    model_config(codex_home, model.url)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await client.call("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "look"}]})
    done = await client.wait_notification("turn/completed", timeout=20)
    assert done["params"]["turn"]["status"] == "completed"
    last = model.requests()[-1]["body"]["input"]
    outputs = [i for i in last if i.get("type") == "function_call_output"]
    assert [o["call_id"] for o in outputs] == [f"call_{i}" for i in range(len(paths))]
    return client, thread_id, outputs


async def test_view_image_round_trip_and_image_view_item(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    image = png(4, 3)
    (workspace / "img.png").write_bytes(image)
    (workspace / "a.gif").write_bytes(GIF_1X1)
    client, thread_id, outputs = await _run(app_server, fake_model, codex_home, workspace, ["img.png", "a.gif"])
    assert outputs[0]["output"] == [{"type": "input_image", "image_url": data_url(image), "detail": "high"}]
    assert outputs[0]["id"].startswith("fco_")
    gif = decode(outputs[1]["output"][0]["image_url"])  # a GIF goes out as a PNG, as Codex sends it
    assert (gif["mime"], gif["width"], gif["height"]) == ("image/png", 1, 1)
    started = [m["params"]["item"] for m in client.notifications("item/started")
               if m["params"]["item"]["type"] == "imageView"]
    completed = [m["params"]["item"] for m in client.notifications("item/completed")
                 if m["params"]["item"]["type"] == "imageView"]
    assert [i["id"] for i in started] == ["call_0", "call_1"] == [i["id"] for i in completed]
    assert completed[0]["path"] == str(workspace / "img.png")
    assert list(completed[0]) == ["type", "id", "path", "startedAtMs", "completedAtMs"]
    assert started[0]["completedAtMs"] is None and isinstance(completed[0]["completedAtMs"], int)
    read = await client.call("thread/read", {"threadId": thread_id, "includeTurns": True})
    kinds = [i["type"] for i in read["thread"]["turns"][0]["items"]]
    assert kinds == ["userMessage", "imageView", "imageView", "agentMessage"]


async def test_view_image_errors_use_codex_texts_and_emit_no_item(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    (workspace / "x.txt").write_text("hello")
    client, _, outputs = await _run(app_server, fake_model, codex_home, workspace, ["nope.png", "x.txt", "."])
    assert [o["output"] for o in outputs] == [
        f"unable to locate image at `{workspace / 'nope.png'}`: No such file or directory (os error 2)",
        "unable to process image: invalid or unsupported image data",
        f"image path `{workspace / '.'}` is not a file",
    ]
    assert not [m for m in client.notifications("item/started") if m["params"]["item"]["type"] == "imageView"]
