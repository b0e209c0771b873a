"""A model whose catalog `inputModalities` lack "image" gets Codex's placeholder text in place of every image
(user message parts and view_image output), while the thread's history keeps the images. No bundled catalog
model is text-only, so the test serves a catalog with one."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app_server.model.catalog import Catalog, catalog
from app_server.threads import model_metadata
from app_server.tools import images
from tests.support.fake_model import message, model_config
from tests.support.images import data_url, png


@pytest.fixture
def text_only_catalog(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    real = catalog()
    entry = {**real.models[0], "id": "text-only-1", "model": "text-only-1", "inputModalities": ["text"]}
    monkeypatch.setattr(model_metadata, "catalog", lambda: Catalog(real.default_model, (entry, *real.models)))
    images.supports_images.cache_clear()
    yield
    images.supports_images.cache_clear()


def test_model_input_replaces_images_only_for_text_only_models(text_only_catalog: None) -> None:
    image = {"type": "input_image", "image_url": data_url(png(1, 1)), "detail": "high"}
    history = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "a"}, image]},
        {"type": "function_call_output", "call_id": "c", "output": [image]},
        {"type": "function_call_output", "call_id": "d", "output": "text"},
    ]
    assert images.model_input(history, "gpt-5.5") is history
    assert images.model_input(history, "mock-model") is history  # fallback metadata takes images
    stripped = images.model_input(history, "text-only-1")
    placeholder = {"type": "input_text", "text": images.NOT_SUPPORTED}
    assert stripped[0]["content"] == [{"type": "input_text", "text": "a"}, placeholder]
    assert stripped[1]["output"] == [placeholder] and stripped[2] == history[2]
    assert history[0]["content"][1] == image  # the history is left as it was


async def test_text_only_model_turn_gets_placeholders(
    text_only_catalog: None, app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    (workspace / "img.png").write_bytes(png(2, 2))
    model = await fake_model([
        {"output": [{"type": "function_call", "name": "view_image", "call_id": "call_v",
                     "arguments": json.dumps({"path": "img.png"})}]},
        {"output": [message("done")]},
    ])
    model_config(codex_home, model.url)
    config = codex_home / "config.toml"
    config.write_text(config.read_text().replace('model = "mock-model"', 'model = "text-only-1"'))
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await client.call("turn/start", {"threadId": thread_id, "input": [
        {"type": "localImage", "path": "img.png"}, {"type": "text", "text": "hi"}]})
    done = await client.wait_notification("turn/completed", timeout=20)
    assert done["params"]["turn"]["status"] == "completed"
    body = model.requests()[-1]["body"]
    sent = json.dumps(body["input"])
    assert "input_image" not in sent and images.NOT_SUPPORTED in sent
    user = [i for i in body["input"] if i.get("role") == "user"][-1]
    assert user["content"][1] == {"type": "input_text", "text": images.NOT_SUPPORTED}
    output = next(i for i in body["input"] if i.get("type") == "function_call_output")
    assert output["output"] == [{"type": "input_text", "text": images.NOT_SUPPORTED}]
