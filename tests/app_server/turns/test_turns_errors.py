"""Model failures end the turn as Codex does: `error`, failed `turn/completed`, systemError, then recovery."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model import message

HIGH_DEMAND = "We\u2019re currently experiencing high demand, which may cause temporary errors."
DISCONNECTED = "stream disconnected before completion: "


def _config(
    codex_home: Path, url: str, *, stream_max_retries: int = 0, idle_ms: int | None = None, request_max_retries: int = 0
) -> None:
    idle = f"stream_idle_timeout_ms = {idle_ms}\n" if idle_ms is not None else ""
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        'model = "mock-model"\napproval_policy = "never"\nsandbox_mode = "workspace-write"\n'
        'model_provider = "mock_provider"\n\n[model_providers.mock_provider]\nname = "Mock provider"\n'
        f'base_url = "{url}"\nwire_api = "responses"\nrequest_max_retries = {request_max_retries}\n'
        f"stream_max_retries = {stream_max_retries}\n{idle}"
    )


def _turn_error(message_text: str, info: Any) -> dict[str, Any]:
    return {"message": message_text, "codexErrorInfo": info, "additionalDetails": None, "misalignment": None}


async def _run_turn(
    client: Any, thread_id: str, text: str, timeout: float = 15
) -> tuple[str, dict[str, Any]]:
    turn = (
        await client.call("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": text}]})
    )["turn"]
    done = await client.wait_notification(
        "turn/completed", lambda p: p["turn"]["id"] == turn["id"], timeout=timeout
    )
    return turn["id"], done["params"]["turn"]


def _turn_methods(client: Any, turn_id: str) -> list[str]:
    """Methods about one turn (plus thread status changes) from just before turn/started to turn/completed."""
    notes = client.notifications()

    def tid(m: dict[str, Any]) -> str | None:
        p = m.get("params") or {}
        return p.get("turnId") or (p.get("turn") or {}).get("id")

    first = next(i for i, m in enumerate(notes) if m["method"] == "turn/started" and tid(m) == turn_id)
    last = next(i for i, m in enumerate(notes) if m["method"] == "turn/completed" and tid(m) == turn_id)
    return [
        m["method"]
        for m in notes[max(first - 1, 0) : last + 1]
        if tid(m) == turn_id or m["method"] == "thread/status/changed"
    ]


async def test_each_upstream_failure_fails_the_turn_with_the_reference_turn_error(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    bad_request = {"error": {"message": "mock bad request", "type": "invalid_request_error", "code": "bad"}}
    cases: list[tuple[str, dict[str, Any], str | None, Any]] = [
        ("http 500", {"status": 500, "body": "upstream exploded"}, HIGH_DEMAND, "internalServerError"),
        # Codex 0.169 reports the raw JSON body as the message; pycodex its `error.message` (body in the details).
        ("http 400", {"status": 400, "body": bad_request}, "mock bad request", "other"),
        (
            "http 401",
            {"status": 401, "body": {"error": {"message": "mock unauthorized"}}},
            None,
            {"httpConnectionFailed": {"httpStatusCode": 401}},
        ),
        (
            "http 429 usage",
            {"status": 429, "body": {"error": {"type": "usage_limit_reached", "message": "limit"}}},
            "You\u2019ve hit your usage limit. Try again later.",
            "usageLimitExceeded",
        ),
        (
            "failed server_error",
            {"output": [], "failed": {"code": "server_error", "message": "mock response.failed"}},
            DISCONNECTED + "mock response.failed",
            "other",
        ),
        (
            "truncated",
            {"output": [message("cut short")], "truncate_after": 2},
            DISCONNECTED + "stream closed before response.completed",
            "other",
        ),
        (
            "context window",
            {"output": [], "failed": {"code": "context_length_exceeded", "message": "too long"}},
            "Codex ran out of room in the model's context window. Start a new thread or clear earlier history "
            "before retrying.",
            "contextWindowExceeded",
        ),
    ]
    model = await fake_model([c[1] for c in cases])
    _config(codex_home, model.url)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    for name, _reply, text, info in cases:
        if text is None:
            text = f"unexpected status 401 Unauthorized: mock unauthorized, url: {model.url}/responses"
        turn_id, final = await _run_turn(client, thread_id, f"case {name}")
        expected = _turn_error(text, info)
        if name == "http 400":
            expected["additionalDetails"] = json.dumps(bad_request)
        assert final["status"] == "failed", name
        assert final["error"] == expected, name
        assert final["items"] == [] and final["itemsView"] == "notLoaded", name
        errors = [m["params"] for m in client.notifications("error") if m["params"]["turnId"] == turn_id]
        assert errors == [
            {"error": expected, "willRetry": False, "threadId": thread_id, "turnId": turn_id}
        ], name
        seq = _turn_methods(client, turn_id)
        assert seq[:2] == ["thread/status/changed", "turn/started"], (name, seq)
        assert seq[-3:] == ["thread/status/changed", "error", "turn/completed"], (name, seq)
        statuses = [m["params"]["status"] for m in client.notifications("thread/status/changed")]
        assert statuses[-1] == {"type": "systemError"}, name
        # The next turn goes back to active: the start of the following case shows it.
    statuses = [m["params"]["status"]["type"] for m in client.notifications("thread/status/changed")]
    assert statuses == ["active", "systemError"] * len(cases)
    read = await client.call("thread/read", {"threadId": thread_id})
    assert read["thread"]["status"] == {"type": "systemError"}
    assert (await client.call("thread/loaded/list", {}))["data"] == [thread_id]
    # Failed turns keep their user messages in the history the model sees.
    last_input = model.requests()[-1]["body"]["input"]
    user_texts = [c["text"] for i in last_input if i.get("role") == "user" for c in i["content"]]
    assert "case http 500" in user_texts and "case truncated" in user_texts


async def test_a_stalled_stream_times_out_and_retries_are_announced(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model(
        [
            {"output": [message("never")], "stall_after": 1, "stall_s": 20},
            {"status": 500, "body": "boom"},
            {"output": [message("recovered")]},
        ]
    )
    _config(codex_home, model.url, stream_max_retries=2, idle_ms=400)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    turn_id, final = await _run_turn(client, thread_id, "go", timeout=20)
    assert final["status"] == "completed"
    assert final["items"][0]["text"] == "recovered"
    errors = [m["params"] for m in client.notifications("error") if m["params"]["turnId"] == turn_id]
    assert [e["willRetry"] for e in errors] == [True, True]
    assert errors[0]["error"]["message"] == "Reconnecting... 1/2"
    assert errors[1]["error"]["message"] == "Reconnecting... 2/2"
    assert errors[0]["error"]["additionalDetails"] == DISCONNECTED + "idle timeout waiting for SSE"
    assert errors[1]["error"]["additionalDetails"] == HIGH_DEMAND
    assert len(model.requests()) == 3
    statuses = [m["params"]["status"]["type"] for m in client.notifications("thread/status/changed")]
    assert statuses == ["active", "idle"]


async def test_a_stall_without_retries_fails_the_turn_with_the_idle_timeout(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model(
        [{"output": [message("never")], "stall_after": 1, "stall_s": 20}, {"output": [message("fine again")]}]
    )
    _config(codex_home, model.url, idle_ms=300)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    _, final = await _run_turn(client, thread_id, "go")
    assert final["status"] == "failed"
    assert final["error"] == _turn_error(DISCONNECTED + "idle timeout waiting for SSE", "other")
    _, second = await _run_turn(client, thread_id, "again")
    assert second["status"] == "completed" and second["items"][0]["text"] == "fine again"
    statuses = [m["params"]["status"]["type"] for m in client.notifications("thread/status/changed")]
    assert statuses == ["active", "systemError", "active", "idle"]


def _turn_errors(client: Any, turn_id: str) -> list[dict[str, Any]]:
    return [m["params"] for m in client.notifications("error") if m["params"]["turnId"] == turn_id]


def _completions(client: Any, turn_id: str) -> int:
    return sum(1 for m in client.notifications("turn/completed") if m["params"]["turn"]["id"] == turn_id)


async def test_a_429_is_retried_after_the_servers_hint_and_the_turn_completes(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model(
        [{"status": 429, "body": "slow down", "headers": {"retry-after-ms": "20"}}, {"output": [message("after 429")]}]
    )
    _config(codex_home, model.url, request_max_retries=2)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    turn_id, final = await _run_turn(client, thread_id, "go")
    assert final["status"] == "completed" and final["items"][0]["text"] == "after 429"
    assert _turn_errors(client, turn_id) == []  # request-level retries are silent
    assert len(model.requests()) == 2


async def test_a_retry_after_beyond_the_cap_fails_the_turn_at_once(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([{"status": 429, "body": "", "headers": {"Retry-After": "3600"}}])
    _config(codex_home, model.url, request_max_retries=2, stream_max_retries=2)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    turn_id, final = await _run_turn(client, thread_id, "go")
    assert final["status"] == "failed"
    assert final["error"]["message"] == (
        "exceeded retry limit, last status: 429 Too Many Requests (the server asked to retry after 3600s, "
        "longer than the 60s this client waits; giving up)"
    )
    assert final["error"]["codexErrorInfo"] == {"responseTooManyFailedAttempts": {"httpStatusCode": 429}}
    assert [e["willRetry"] for e in _turn_errors(client, turn_id)] == [False]
    assert _completions(client, turn_id) == 1
    assert len(model.requests()) == 1


@pytest.mark.parametrize("request_retries", [0, 2])
async def test_an_unreachable_provider_fails_the_turn_once_naming_it(
    app_server: Any, codex_home: Path, workspace: Path, request_retries: int
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"  # closed once the block ends
    _config(codex_home, url, request_max_retries=request_retries)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    turn_id, final = await _run_turn(client, thread_id, "go")
    expected = _turn_error(
        f"Connection failed: error sending request to model provider `mock_provider` ({url}): connection refused",
        {"responseStreamConnectionFailed": {"httpStatusCode": None}},
    )
    assert (final["status"], final["error"]) == ("failed", expected)
    assert _turn_errors(client, turn_id) == [
        {"error": expected, "willRetry": False, "threadId": thread_id, "turnId": turn_id}
    ]
    seq = _turn_methods(client, turn_id)
    assert seq[-3:] == ["thread/status/changed", "error", "turn/completed"], seq
    assert _completions(client, turn_id) == 1
