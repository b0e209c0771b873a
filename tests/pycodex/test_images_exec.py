"""`pycodex exec -i FILE`: the image reaches the model as Codex's input_image, and an image turn's
`--json` events are Codex's (the view_image call shows no event in exec --json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.pycodex.test_exec_cli import _shape, make_env  # noqa: F401  (make_env is a fixture)
from tests.support.fake_model import message
from tests.support.images import data_url, png


def _view(path: str) -> dict[str, Any]:
    return {"type": "function_call", "name": "view_image", "call_id": "call_v",
            "arguments": json.dumps({"path": path})}


async def test_exec_image_flag_reaches_the_model_as_input_image(make_env: Any) -> None:  # noqa: F811
    env = await make_env([{"output": [message("done")]}])
    image = png(4, 3)
    (env.work / "img.png").write_bytes(image)
    run = await env.exec("--json", "--skip-git-repo-check", "describe", "-i", "img.png")
    assert run.code == 0, run.stderr
    content = env.requests()[0]["body"]["input"][-1]["content"]
    assert content == [  # as Codex: images first, the path as given on the command line
        {"type": "input_text", "text": '<image name=[Image #1] path="img.png">'},
        {"type": "input_image", "image_url": data_url(image), "detail": "high"},
        {"type": "input_text", "text": "</image>"},
        {"type": "input_text", "text": "describe"},
    ]


def _normalised(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Events without ids, thread ids and Codex's mock-model metadata warning."""
    out = []
    for event in events:
        item = event.get("item", {})
        if item.get("type") == "error" and str(item.get("message", "")).startswith("Model metadata for"):
            continue
        event = {k: v for k, v in event.items() if k not in ("thread_id", "usage")}
        if item:
            event["item"] = {k: v for k, v in item.items() if k != "id"}
        out.append(event)
    return out


@pytest.mark.codex
async def test_image_turn_events_equal_codex_exec_json(make_env: Any, codex_bin: Path) -> None:  # noqa: F811
    script = [{"output": [_view("img.png")]}, {"output": [message("seen")]}]
    runs = []
    for binary in (None, codex_bin):
        env = await make_env(script)
        (env.work / "img.png").write_bytes(png(4, 3))
        run = await env.exec("--json", "--skip-git-repo-check", "look", "-i", "img.png", binary=binary)
        assert run.code == 0, run.stderr
        output = [i for i in env.requests()[-1]["body"]["input"] if i.get("type") == "function_call_output"]
        runs.append((run, output[0]["output"]))
    (ours, our_output), (theirs, their_output) = runs
    assert _shape(ours.events) == _shape(theirs.events)
    assert _normalised(ours.events) == _normalised(theirs.events)
    assert our_output == their_output  # the same input_image content list, detail included
