"""turn/start and turn/steer refuse text inputs over 1,048,576 characters, as Codex does (-32602
input_too_large, with the sizes in `data`), and keep serving; the boundary itself is accepted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.fake_model import message, model_config

LIMIT = 1_048_576


def _too_large(actual: int) -> dict[str, Any]:
    return {
        "code": -32602,
        "data": {"input_error_code": "input_too_large", "max_chars": LIMIT, "actual_chars": actual},
        "message": f"Input exceeds the maximum length of {LIMIT} characters.",
    }


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


async def _start(client: Any, thread_id: str, *parts: dict[str, Any]) -> dict[str, Any]:
    response: dict[str, Any] = await client.request(
        "turn/start", {"threadId": thread_id, "input": list(parts)}, timeout=30
    )
    return response


async def test_the_limit_is_inclusive_and_one_more_character_is_refused(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model({"responses": [{"output": [message("ok")]}], "when_exhausted": "repeat_last"})
    model_config(codex_home, model.url)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]

    refused = await _start(client, thread_id, _text("a" * (LIMIT + 1)))
    assert refused.get("error") == _too_large(LIMIT + 1)
    assert model.requests() == []  # nothing reached the model

    accepted = await _start(client, thread_id, _text("a" * LIMIT))
    turn_id = accepted["result"]["turn"]["id"]
    done = await client.wait_notification("turn/completed", lambda p: p["turn"]["id"] == turn_id, timeout=30)
    assert done["params"]["turn"]["status"] == "completed"
    sent = model.requests()[-1]["body"]["input"][-1]
    assert sent["role"] == "user" and sent["content"][0]["text"] == "a" * LIMIT


async def test_characters_are_counted_over_all_text_parts_not_bytes(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model({"responses": [{"output": [message("ok")]}], "when_exhausted": "repeat_last"})
    model_config(codex_home, model.url)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]

    two_parts = await _start(client, thread_id, _text("a" * 600_000), _text("b" * 600_000))
    assert two_parts.get("error") == _too_large(1_200_000)
    multibyte = await _start(client, thread_id, _text("é" * (LIMIT + 1)))  # 2 MiB of UTF-8
    assert multibyte.get("error") == _too_large(LIMIT + 1)
    emoji = await _start(client, thread_id, _text("😀" * (LIMIT + 1)))  # code points, not UTF-16 units
    assert emoji.get("error") == _too_large(LIMIT + 1)

    # still serving, and nothing of the refused text was stored
    small = await _start(client, thread_id, _text("hello"))
    turn_id = small["result"]["turn"]["id"]
    await client.wait_notification("turn/completed", lambda p: p["turn"]["id"] == turn_id, timeout=30)
    assert len(model.requests()) == 1
    rollouts = list(codex_home.rglob("rollout-*.jsonl"))
    assert rollouts and all(p.stat().st_size < 200_000 for p in rollouts)


async def test_a_steer_is_checked_before_its_turn_id(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    # The first response stalls, so the turn stays active while we steer it.
    model = await fake_model([{"output": [message("slow")], "stall_after": 1, "stall_s": 30}])
    model_config(codex_home, model.url)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    turn_id = (await _start(client, thread_id, _text("go")))["result"]["turn"]["id"]
    await client.wait_notification("turn/started", timeout=10)

    big = [_text("x" * (LIMIT + 7))]
    steer = await client.request(
        "turn/steer", {"threadId": thread_id, "expectedTurnId": turn_id, "input": big}, timeout=30
    )
    assert steer.get("error") == _too_large(LIMIT + 7)
    wrong_turn = await client.request(
        "turn/steer", {"threadId": thread_id, "expectedTurnId": "not-this-turn", "input": big}, timeout=30
    )
    assert wrong_turn.get("error") == _too_large(LIMIT + 7)
    merged = await _start(client, thread_id, *big)  # a start during the turn would merge into it
    assert merged.get("error") == _too_large(LIMIT + 7)

    ok = await client.request(
        "turn/steer", {"threadId": thread_id, "expectedTurnId": turn_id, "input": [_text("more")]}, timeout=30
    )
    assert ok.get("result") == {"turnId": turn_id}
    await client.call("turn/interrupt", {"threadId": thread_id, "turnId": turn_id})
    await client.wait_notification("turn/completed", lambda p: p["turn"]["id"] == turn_id, timeout=30)
