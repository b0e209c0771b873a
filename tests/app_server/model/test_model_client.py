"""The Responses HTTP client against the fake Responses server running as a real subprocess."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from app_server.model import ModelClient, ModelError, ProviderConfig, RequestContext, RetryNotice
from app_server.model.errors import HIGH_DEMAND, IDLE_TIMEOUT, STREAM_CLOSED, USAGE_LIMIT
from app_server.model.events import (
    FunctionCallItem,
    MessageItem,
    OutputItemDone,
    OutputTextDelta,
    ReasoningItem,
    ReasoningSummaryTextDelta,
    ResponseCompleted,
    ResponseCreated,
    ResponseEvent,
    ResponseRestarted,
)
from app_server.model.retry import no_backoff

FAKE_SERVER = Path(__file__).resolve().parents[3] / "fixtures" / "fake_responses_server.py"
CTX = RequestContext(
    thread_id="thr-1",
    turn_id="turn-1",
    originator="pycodex_tests",
    user_agent="pycodex_tests/0.1",
    turn_metadata={"thread_id": "thr-1", "turn_id": "turn-1", "request_kind": "turn"},
)
BODY = {"model": "mock-model", "input": [{"type": "message", "role": "user", "content": []}]}


class FakeServer:
    def __init__(self, proc: subprocess.Popen[bytes], port: int, log: Path) -> None:
        self.proc = proc
        self.port = port
        self.log = log

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def requests(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]


@pytest.fixture
def fake_server(tmp_path: Path) -> Iterator[Callable[[list[Any]], FakeServer]]:
    started: list[subprocess.Popen[bytes]] = []

    def start(script: list[Any]) -> FakeServer:
        script_path = tmp_path / f"script{len(started)}.json"
        script_path.write_text(json.dumps(script))
        log = tmp_path / f"requests{len(started)}.jsonl"
        proc = subprocess.Popen(
            [sys.executable, str(FAKE_SERVER), str(script_path), "--log", str(log)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        started.append(proc)
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        return FakeServer(proc, port, log)

    yield start
    for proc in started:
        assert proc.stdin is not None
        proc.stdin.close()  # the server stops at stdin EOF
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        if proc.stdout is not None:
            proc.stdout.close()


def provider(server: FakeServer, **overrides: Any) -> ProviderConfig:
    base = ProviderConfig(
        id="mock_provider",
        name="Mock provider",
        base_url=server.base_url,
        request_max_retries=0,
        stream_max_retries=0,
        stream_idle_timeout_ms=5_000,
    )
    return replace(base, **overrides)


async def collect(client: ModelClient, notices: list[RetryNotice] | None = None) -> list[ResponseEvent]:
    events: list[ResponseEvent] = []
    async for event in client.stream(BODY, CTX, on_retry=None if notices is None else notices.append):
        events.append(event)
    return events


async def expect_error(client: ModelClient, notices: list[RetryNotice] | None = None) -> ModelError:
    with pytest.raises(ModelError) as info:
        await collect(client, notices)
    return info.value


FULL_RESPONSE = {
    "output": [
        {"type": "reasoning", "summary": ["thinking"]},
        {"type": "message", "text": "hello", "deltas": ["hel", "lo"]},
        {"type": "function_call", "name": "exec_command", "arguments": {"cmd": "ls"}, "call_id": "call_1"},
    ],
    "usage": {
        "input_tokens": 12,
        "input_tokens_details": {"cached_tokens": 2},
        "output_tokens": 7,
        "output_tokens_details": {"reasoning_tokens": 3},
        "total_tokens": 19,
    },
}


async def test_a_successful_stream_yields_typed_events_in_order(fake_server: Any) -> None:
    server = fake_server([FULL_RESPONSE])
    async with ModelClient(provider(server), env={}) as client:
        events = await collect(client)
    assert isinstance(events[0], ResponseCreated)
    deltas = [e.delta for e in events if isinstance(e, OutputTextDelta)]
    assert deltas == ["hel", "lo"]
    assert [e.delta for e in events if isinstance(e, ReasoningSummaryTextDelta)] == ["thinking"]
    done = [e.item for e in events if isinstance(e, OutputItemDone)]
    assert isinstance(done[0], ReasoningItem) and done[0].summary == ("thinking",)
    assert isinstance(done[1], MessageItem) and done[1].text == "hello"
    assert isinstance(done[2], FunctionCallItem)
    assert (done[2].name, done[2].call_id, json.loads(done[2].arguments)) == (
        "exec_command",
        "call_1",
        {"cmd": "ls"},
    )
    last = events[-1]
    assert isinstance(last, ResponseCompleted) and last.usage is not None
    assert (last.usage.input_tokens, last.usage.cached_input_tokens, last.usage.output_tokens) == (12, 2, 7)
    assert (last.usage.reasoning_output_tokens, last.usage.total_tokens) == (3, 19)


async def test_the_request_carries_codex_headers_params_and_a_streaming_body(fake_server: Any) -> None:
    server = fake_server([FULL_RESPONSE])
    prov = provider(
        server, env_key="PYCODEX_TEST_KEY", http_headers={"x-extra": "1"}, query_params={"api-version": "v9"}
    )
    async with ModelClient(prov, env={"PYCODEX_TEST_KEY": "sk-test"}) as client:
        await collect(client)
    [request] = server.requests()
    headers = request["headers"]
    assert request["path"] == "/v1/responses" and request["query"] == "api-version=v9"
    assert headers["accept"] == "text/event-stream"
    assert headers["content-type"] == "application/json"
    assert headers["originator"] == "pycodex_tests"
    assert headers["user-agent"] == "pycodex_tests/0.1"
    assert headers["session-id"] == headers["thread-id"] == headers["x-client-request-id"] == "thr-1"
    assert headers["x-codex-window-id"] == "thr-1:0"
    assert headers["x-codex-beta-features"] == "remote_compaction_v2"
    assert json.loads(headers["x-codex-turn-metadata"]) == {
        "thread_id": "thr-1",
        "turn_id": "turn-1",
        "request_kind": "turn",
    }
    assert headers["x-extra"] == "1"
    assert headers["authorization"] == "Bearer sk-test"
    assert request["body"] == {**BODY, "stream": True}


async def test_no_authorization_header_is_sent_without_env_key(fake_server: Any) -> None:
    server = fake_server([FULL_RESPONSE])
    async with ModelClient(provider(server), env={"OPENAI_API_KEY": "x"}) as client:
        await collect(client)
    [request] = server.requests()
    assert "authorization" not in request["headers"]


async def test_an_unset_env_key_fails_before_any_request_like_codex(fake_server: Any) -> None:
    server = fake_server([FULL_RESPONSE])
    prov = provider(server, env_key="MISSING_KEY", stream_max_retries=3)
    async with ModelClient(prov, env={"MISSING_KEY": ""}) as client:
        err = await expect_error(client)
    assert err.payload.to_wire() == {
        "message": "Missing environment variable: `MISSING_KEY`.",
        "codexErrorInfo": "other",
        "additionalDetails": None,
        "misalignment": None,
    }
    assert server.requests() == []


async def test_http_500_is_retried_silently_then_reported_as_internal_server_error(fake_server: Any) -> None:
    server = fake_server([{"status": 500, "body": "boom"}] * 3)
    notices: list[RetryNotice] = []
    async with ModelClient(provider(server, request_max_retries=2), env={}, backoff=no_backoff) as client:
        err = await expect_error(client, notices)
    assert err.payload.to_wire() == {
        "message": HIGH_DEMAND,
        "codexErrorInfo": "internalServerError",
        "additionalDetails": None,
        "misalignment": None,
    }
    assert notices == []
    assert len(server.requests()) == 3


async def test_stream_retries_are_announced_with_the_reconnecting_payload(fake_server: Any) -> None:
    server = fake_server([{"status": 500, "body": "boom"}] * 4)
    notices: list[RetryNotice] = []
    prov = provider(server, request_max_retries=1, stream_max_retries=1)
    async with ModelClient(prov, env={}, backoff=no_backoff) as client:
        err = await expect_error(client, notices)
    assert err.payload.codex_error_info == "internalServerError"
    assert len(server.requests()) == 4  # (1 + request retries) * (1 + stream retries)
    assert [n.payload.to_wire() for n in notices] == [
        {
            "message": "Reconnecting... 1/1",
            "codexErrorInfo": {"responseStreamDisconnected": {"httpStatusCode": None}},
            "additionalDetails": HIGH_DEMAND,
            "misalignment": None,
        }
    ]


async def test_http_401_maps_to_http_connection_failed_with_the_url(fake_server: Any) -> None:
    server = fake_server([{"status": 401, "body": {"error": {"message": "bad key"}}}] * 2)
    notices: list[RetryNotice] = []
    prov = provider(server, request_max_retries=3, stream_max_retries=1)
    async with ModelClient(prov, env={}, backoff=no_backoff) as client:
        err = await expect_error(client, notices)
    assert (
        err.payload.message
        == f"unexpected status 401 Unauthorized: bad key, url: {server.base_url}/responses"
    )
    assert err.payload.codex_error_info == {"httpConnectionFailed": {"httpStatusCode": 401}}
    assert [n.payload.codex_error_info for n in notices] == [
        {"responseStreamDisconnected": {"httpStatusCode": 401}}
    ]
    assert len(server.requests()) == 2  # no silent request retries for 4xx


async def test_http_429_usage_limit_is_usage_limit_exceeded_and_not_retried(fake_server: Any) -> None:
    body = {"error": {"type": "usage_limit_reached", "message": "limit"}}
    server = fake_server([{"status": 429, "body": body}] * 3)
    prov = provider(server, request_max_retries=2, stream_max_retries=2)
    async with ModelClient(prov, env={}, backoff=no_backoff) as client:
        err = await expect_error(client)
    assert (err.payload.message, err.payload.codex_error_info) == (USAGE_LIMIT, "usageLimitExceeded")
    assert len(server.requests()) == 1


async def test_http_400_reports_the_error_message_and_keeps_the_body_in_the_details(fake_server: Any) -> None:
    """Codex 0.169 reports the raw JSON body as the message; pycodex reports the body's ``error.message``."""
    body = {"error": {"message": "mock bad request", "type": "invalid_request_error", "code": "bad"}}
    server = fake_server([{"status": 400, "body": body}] * 2)
    async with ModelClient(provider(server, stream_max_retries=1), env={}, backoff=no_backoff) as client:
        err = await expect_error(client)
    assert err.payload.message == "mock bad request"
    assert err.payload.additional_details == json.dumps(body)
    assert err.payload.codex_error_info == "other"
    assert len(server.requests()) == 1


async def test_http_400_without_an_error_message_reports_the_raw_body(fake_server: Any) -> None:
    server = fake_server([{"status": 400, "body": "plain bad"}])
    async with ModelClient(provider(server, stream_max_retries=1), env={}, backoff=no_backoff) as client:
        err = await expect_error(client)
    assert (err.payload.message, err.payload.additional_details) == ("plain bad", None)


async def test_response_failed_is_a_stream_disconnect_with_the_server_message(fake_server: Any) -> None:
    server = fake_server([{"output": [], "failed": {"code": "server_error", "message": "mock failed"}}])
    async with ModelClient(provider(server), env={}) as client:
        err = await expect_error(client)
    assert err.payload.message == "stream disconnected before completion: mock failed"
    assert err.payload.codex_error_info == "other"


async def test_context_length_exceeded_is_context_window_exceeded_and_not_retried(fake_server: Any) -> None:
    failed = {"code": "context_length_exceeded", "message": "too long"}
    server = fake_server([{"output": [], "failed": failed}] * 2)
    async with ModelClient(provider(server, stream_max_retries=1), env={}, backoff=no_backoff) as client:
        err = await expect_error(client)
    assert err.payload.codex_error_info == "contextWindowExceeded"
    assert err.payload.message.startswith("Codex ran out of room in the model's context window.")
    assert len(server.requests()) == 1


async def test_a_truncated_stream_is_stream_closed_before_completed(fake_server: Any) -> None:
    server = fake_server([{**FULL_RESPONSE, "truncate_after": 3}])
    async with ModelClient(provider(server), env={}) as client:
        err = await expect_error(client)
    assert (err.payload.message, err.payload.codex_error_info) == (STREAM_CLOSED, "other")


async def test_a_stalled_stream_hits_the_idle_timeout(fake_server: Any) -> None:
    server = fake_server([{**FULL_RESPONSE, "stall_after": 1, "stall_s": 10}])
    async with ModelClient(provider(server, stream_idle_timeout_ms=300), env={}) as client:
        err = await expect_error(client)
    assert (err.payload.message, err.payload.codex_error_info) == (IDLE_TIMEOUT, "other")


async def test_a_retry_after_partial_output_restarts_and_then_succeeds(fake_server: Any) -> None:
    server = fake_server([{**FULL_RESPONSE, "truncate_after": 4}, FULL_RESPONSE])
    notices: list[RetryNotice] = []
    async with ModelClient(provider(server, stream_max_retries=2), env={}, backoff=no_backoff) as client:
        events = await collect(client, notices)
    restarts = [e for e in events if isinstance(e, ResponseRestarted)]
    assert restarts == [ResponseRestarted(attempt=1)]
    after = events[events.index(restarts[0]) + 1 :]
    assert isinstance(after[0], ResponseCreated) and isinstance(after[-1], ResponseCompleted)
    assert [n.payload.message for n in notices] == ["Reconnecting... 1/2"]
    assert notices[0].payload.additional_details == STREAM_CLOSED


async def test_an_async_retry_callback_is_awaited(fake_server: Any) -> None:
    server = fake_server([{"output": [], "failed": {"code": "server_error", "message": "x"}}, FULL_RESPONSE])
    seen: list[str] = []

    async def on_retry(notice: RetryNotice) -> None:
        seen.append(notice.payload.message)

    async with ModelClient(provider(server, stream_max_retries=1), env={}, backoff=no_backoff) as client:
        events = [e async for e in client.stream(BODY, CTX, on_retry=on_retry)]
    assert seen == ["Reconnecting... 1/1"]
    assert isinstance(events[-1], ResponseCompleted)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_a_refused_connection_waits_for_network_then_fails_when_the_limit_is_reached() -> None:
    base_url = f"http://127.0.0.1:{free_port()}/v1"
    prov = ProviderConfig(id="dead", name="dead", base_url=base_url, request_max_retries=0)
    notices: list[RetryNotice] = []
    client = ModelClient(prov, env={}, network_backoff=no_backoff, network_retry_limit=2)
    async with client:
        err = await expect_error(client, notices)
    message = f"Connection failed: error sending request to model provider `dead` ({base_url}): connection refused"
    assert [n.payload.to_wire() for n in notices] == [
        {
            "message": "Reconnecting... waiting for network",
            "codexErrorInfo": {"responseStreamDisconnected": {"httpStatusCode": None}},
            "additionalDetails": message,
            "misalignment": None,
        }
    ] * 2
    assert err.payload.message == message


async def test_cancelling_a_stalled_stream_ends_promptly_and_frees_the_connection(fake_server: Any) -> None:
    server = fake_server([{**FULL_RESPONSE, "stall_after": 1, "stall_s": 20}, FULL_RESPONSE])
    seen: list[ResponseEvent] = []

    async def consume(client: ModelClient) -> None:
        async for event in client.stream(BODY, CTX):
            seen.append(event)

    async with ModelClient(provider(server), env={}) as client:
        task = asyncio.create_task(consume(client))
        deadline = asyncio.get_running_loop().time() + 5
        while not seen and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, timeout=2)
        assert isinstance(seen[0], ResponseCreated)
        # The same client still works for the next request.
        events = await asyncio.wait_for(collect(client), timeout=5)
    assert isinstance(events[-1], ResponseCompleted)
