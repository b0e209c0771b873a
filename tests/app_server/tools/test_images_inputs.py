"""Image inputs reach the model as Codex 0.169 sends them (shapes recorded from the real binary).

A localImage becomes `<image name=[Image #N] path="P">`, an `input_image` data URL of the prepared image and
`</image>`; an image URL its `input_image` alone; N counts both kinds. Unreadable and non-image files become
Codex's texts; a remote URL refuses the turn. The userMessage item echoes the inputs as Codex shows them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.fake_model import message, model_config
from tests.support.images import data_url, png

OMITTED = "image content omitted because it could not be processed"


async def _turn(app_server: Any, fake_model: Any, codex_home: Path, workspace: Path,
                inputs: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Run one turn; return the user message content the model got and the completed userMessage item."""
    model = await fake_model([{"output": [message("done")]}])
    model_config(codex_home, model.url)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await client.call("turn/start", {"threadId": thread_id, "input": inputs})
    done = await client.wait_notification("turn/completed", timeout=20)
    assert done["params"]["turn"]["status"] == "completed"
    user = [m["params"]["item"] for m in client.notifications("item/completed")
            if m["params"]["item"]["type"] == "userMessage"]
    body = model.requests()[0]["body"]
    last = body["input"][-1]
    assert last["role"] == "user"
    return last["content"], user[0]


async def test_local_image_and_image_url_reach_the_model_as_input_image(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    small, other = png(4, 3), png(2, 2)
    (workspace / "img.png").write_bytes(small)
    url = data_url(other)
    inputs = [
        {"type": "text", "text": "first"},
        {"type": "localImage", "path": str(workspace / "img.png")},
        {"type": "image", "url": url, "detail": "low"},
        {"type": "localImage", "path": "img.png"},  # relative to the thread's cwd
        {"type": "text", "text": "last"},
    ]
    content, item = await _turn(app_server, fake_model, codex_home, workspace, inputs)
    # mock-model has no catalog metadata: Codex gives its images detail "high" (catalog models: "original")
    assert content == [
        {"type": "input_text", "text": "first"},
        {"type": "input_text", "text": f'<image name=[Image #1] path="{workspace / "img.png"}">'},
        {"type": "input_image", "image_url": data_url(small), "detail": "high"},
        {"type": "input_text", "text": "</image>"},
        {"type": "input_image", "image_url": url, "detail": "high"},
        {"type": "input_text", "text": '<image name=[Image #3] path="img.png">'},
        {"type": "input_image", "image_url": data_url(small), "detail": "high"},
        {"type": "input_text", "text": "</image>"},
        {"type": "input_text", "text": "last"},
    ]
    assert item["content"] == [
        {"type": "text", "text": "first", "text_elements": []},
        {"type": "localImage", "detail": None, "path": str(workspace / "img.png")},
        {"type": "image", "url": url, "detail": "low"},
        {"type": "localImage", "detail": None, "path": "img.png"},
        {"type": "text", "text": "last", "text_elements": []},
    ]
    assert list(item["content"][1]) == ["type", "detail", "path"]  # Codex's key order


async def test_missing_and_non_image_files_become_codex_texts(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    (workspace / "x.txt").write_text("hello text")
    inputs = [
        {"type": "localImage", "path": "nope.png"},
        {"type": "localImage", "path": "x.txt"},
        {"type": "image", "url": "data:image/png;base64,AAAA"},
        {"type": "text", "text": "describe"},
    ]
    content, _ = await _turn(app_server, fake_model, codex_home, workspace, inputs)
    assert content == [
        {"type": "input_text",
         "text": "Codex could not read the local image at `nope.png`: No such file or directory (os error 2)"},
        {"type": "input_text", "text": '<image name=[Image #2] path="x.txt">'},
        {"type": "input_text", "text": OMITTED},
        {"type": "input_text", "text": "</image>"},
        {"type": "input_text", "text": OMITTED},
        {"type": "input_text", "text": "describe"},
    ]


async def test_a_remote_image_url_is_refused(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([{"output": [message("never")]}])
    model_config(codex_home, model.url)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    reply = await client.request("turn/start", {"threadId": thread_id, "input": [
        {"type": "image", "url": "https://example.com/a.png"}]})
    assert reply["error"]["code"] == -32600
    assert reply["error"]["message"] == "remote image URLs are not supported; use an inline data URL instead"
    assert model.requests() == []


async def test_catalog_models_send_images_with_original_detail(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    (workspace / "img.png").write_bytes(png(3, 3))
    model = await fake_model([{"output": [message("done")]}])
    model_config(codex_home, model.url)
    config = codex_home / "config.toml"
    config.write_text(config.read_text().replace('model = "mock-model"', 'model = "gpt-5.5"'))
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await client.call("turn/start", {"threadId": thread_id, "input": [{"type": "localImage", "path": "img.png"}]})
    await client.wait_notification("turn/completed", timeout=20)
    parts = model.requests()[0]["body"]["input"][-1]["content"]
    assert [p.get("detail") for p in parts if p["type"] == "input_image"] == ["original"]
