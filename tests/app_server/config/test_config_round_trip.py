"""Issue acceptance: a config round trip through the protocol. Three values set with config/batchWrite on a
commented config.toml keep the user's comments, show in config/read, and steer a restarted server's turn
(seen in the request the model receives). Runs against pycodex and, with the same steps, Codex 0.169."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model import message, run_turn

SERVERS = ["pycodex", pytest.param("codex", marks=pytest.mark.codex)]

COMMENTED = """# my settings: written by hand
model = "mock-model"   # the model I use
model_provider = "mock_provider"
approval_policy = "never"

# the local fake provider
[model_providers.mock_provider]
name = "Mock provider"  # shown in /status
base_url = "{url}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
"""

EDITS = [
    {"keyPath": "model", "value": "other-model", "mergeStrategy": "replace"},
    {"keyPath": "model_reasoning_effort", "value": "high", "mergeStrategy": "replace"},
    {"keyPath": "developer_instructions", "value": "Answer like a pirate.", "mergeStrategy": "replace"},
]


def _developer_texts(body: dict[str, Any]) -> list[str]:
    return [part.get("text", "") for item in body.get("input", []) if item.get("role") == "developer"
            for part in item.get("content", [])]


@pytest.mark.parametrize("server", SERVERS)
async def test_batch_write_keeps_comments_reads_back_and_steers_a_restarted_server(
    server: str, app_server: Any, fake_model: Any, codex_home: Path, workspace: Path, request: Any
) -> None:
    argv = None
    if server == "codex":
        argv = [str(request.getfixturevalue("codex_bin")), "app-server"]
    model = await fake_model({"responses": [{"output": [message("arr")]}], "when_exhausted": "repeat_last"})
    config = codex_home / "config.toml"
    codex_home.mkdir(parents=True, exist_ok=True)
    config.write_text(COMMENTED.format(url=model.url))

    first = await app_server(subprocess=True, argv=argv)
    written = await first.call("config/batchWrite", {"edits": EDITS, "filePath": str(config)})
    assert written["status"] == "ok", written
    text = config.read_text()
    for comment in ("# my settings: written by hand", "# the local fake provider", '# shown in /status'):
        assert comment in text, text
    on_disk = tomllib.loads(text)
    assert (on_disk["model"], on_disk["model_reasoning_effort"]) == ("other-model", "high")
    effective = (await first.call("config/read", {}))["config"]
    assert effective["model"] == "other-model"
    assert effective["model_reasoning_effort"] == "high"
    assert effective["developer_instructions"] == "Answer like a pirate."
    await first.close()

    second = await app_server(subprocess=True, argv=argv)
    thread_id = (await second.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    turn = await run_turn(second, thread_id, "hello", timeout=60)
    assert turn["status"] == "completed", turn
    bodies = [r["body"] for r in model.requests() if (r["body"] or {}).get("input")]
    body = bodies[-1]
    assert body["model"] == "other-model"
    assert body["reasoning"]["effort"] == "high"
    assert any("Answer like a pirate." in text for text in _developer_texts(body)), _developer_texts(body)
