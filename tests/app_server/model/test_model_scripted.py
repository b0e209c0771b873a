"""The offline scripted provider: script format, sources, faults, and parity with the HTTP client."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from app_server.model import (
    ModelClient,
    ModelError,
    ProviderConfig,
    RequestContext,
    RetryNotice,
    ScriptedModelClient,
    create_model_client,
)
from app_server.model.errors import STREAM_CLOSED
from app_server.model.events import (
    FunctionCallItem,
    MessageItem,
    OutputItemAdded,
    OutputItemDone,
    ResponseCompleted,
    ResponseCreated,
    ResponseEvent,
)
from app_server.model.script import ScriptError, load_script, parse_script
from app_server.model.scripted import demo_script, resolve_script

ROOT = Path(__file__).resolve().parents[3]
SCRIPTED = ProviderConfig(id="scripted", name="scripted", request_max_retries=0, stream_max_retries=0)
BODY: dict[str, Any] = {"model": "m", "input": []}


def ctx(thread: str = "thr-1") -> RequestContext:
    return RequestContext(thread_id=thread, turn_id="turn-1", originator="tests", user_agent="tests/1")


async def run(stream: AsyncIterator[ResponseEvent]) -> list[ResponseEvent]:
    return [event async for event in stream]


def done_items(events: list[ResponseEvent]) -> list[Any]:
    return [e.item for e in events if isinstance(e, OutputItemDone)]


async def test_the_demo_script_runs_echo_then_answers() -> None:
    client = ScriptedModelClient(SCRIPTED, demo_script())
    first = await run(client.stream(BODY, ctx()))
    calls = [i for i in done_items(first) if isinstance(i, FunctionCallItem)]
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [
        ("exec_command", {"cmd": "echo hello from pycodex"})
    ]
    assert isinstance(first[0], ResponseCreated) and isinstance(first[-1], ResponseCompleted)
    second = await run(client.stream(BODY, ctx()))
    [message] = done_items(second)
    assert isinstance(message, MessageItem) and "hello from pycodex" in message.text


def test_the_packaged_demo_script_is_the_fixture_copy() -> None:
    packaged = ROOT / "app_server" / "model" / "demo_script.json"
    fixture = ROOT / "fixtures" / "scripts" / "demo.json"
    assert json.loads(packaged.read_text()) == json.loads(fixture.read_text())
    assert load_script(fixture) == replace(demo_script(), source=str(fixture))


async def test_each_thread_has_its_own_cursor_and_a_finished_script_starts_over() -> None:
    client = ScriptedModelClient(SCRIPTED, parse_script([["one"], ["two"]]))

    async def text(thread: str) -> str:
        [item] = done_items(await run(client.stream(BODY, ctx(thread))))
        assert isinstance(item, MessageItem)
        return item.text

    assert [await text("a"), await text("b"), await text("a"), await text("a")] == [
        "one",
        "one",
        "two",
        "one",
    ]


async def test_call_ids_are_unique_across_replays() -> None:
    client = ScriptedModelClient(SCRIPTED, demo_script())
    ids = []
    for _ in range(3):
        events = await run(client.stream(BODY, ctx()))
        ids += [i.call_id for i in done_items(events) if isinstance(i, FunctionCallItem)]
    assert len(ids) == 2 and len(set(ids)) == 2


def test_the_script_comes_from_config_then_environment_then_the_demo(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps([["from config"]]))
    b.write_text(json.dumps([["from env"]]))
    env = {"PYCODEX_SCRIPT": str(b)}
    assert resolve_script(replace(SCRIPTED, script=str(a)), env).source == str(a)
    assert resolve_script(SCRIPTED, env).source == str(b)
    assert resolve_script(SCRIPTED, {}) == demo_script()


def test_create_model_client_picks_scripted_or_http() -> None:
    assert isinstance(create_model_client(SCRIPTED, env={}), ScriptedModelClient)
    http = ProviderConfig(id="p", name="p", base_url="http://127.0.0.1:9/v1")
    assert isinstance(create_model_client(http, env={}), ModelClient)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "expected a non-empty list of responses"),
        ([[{"type": "nope"}]], "response 0 item 0: unknown item type 'nope'"),
        ([[{"type": "function_call"}]], "response 0 item 0: function_call needs a string `name`"),
        ([[{"type": "truncate"}, "late"]], "response 0 item 1: nothing may follow a `truncate` fault"),
        ([["x", {"type": "http_error", "status": 500}]], "http_error must be the only item"),
        ([[], 7], "response 1: a response must be a list of items"),
    ],
)
def test_a_bad_script_is_rejected_with_its_position(data: Any, message: str) -> None:
    with pytest.raises(ScriptError, match=message.replace("(", r"\(").replace("[", r"\[")):
        parse_script(data, "s.json")


def test_an_unreadable_or_invalid_json_script_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[\n  ["x",]\n]')
    with pytest.raises(ScriptError, match=r"bad.json: invalid JSON at line 2"):
        load_script(bad)
    with pytest.raises(ScriptError, match="cannot read model script"):
        load_script(tmp_path / "missing.json")


@pytest.mark.parametrize(
    ("fault", "message", "info"),
    [
        (
            {"type": "failed", "code": "server_error", "message": "boom"},
            "stream disconnected before completion: boom",
            "other",
        ),
        (
            {"type": "failed", "code": "context_length_exceeded", "message": "x"},
            None,
            "contextWindowExceeded",
        ),
        ({"type": "http_error", "status": 500}, None, "internalServerError"),
        (
            {"type": "http_error", "status": 401, "body": {"error": {"message": "no"}}},
            "unexpected status 401 Unauthorized: no, url: scripted://scripted/responses",
            {"httpConnectionFailed": {"httpStatusCode": 401}},
        ),
        ({"type": "truncate"}, STREAM_CLOSED, "other"),
        (
            {"type": "stall", "seconds": 5},
            "stream disconnected before completion: idle timeout waiting for SSE",
            "other",
        ),
    ],
)
async def test_script_faults_raise_the_same_errors_as_http(
    fault: dict[str, Any], message: str | None, info: Any
) -> None:
    provider = replace(SCRIPTED, stream_idle_timeout_ms=50)
    client = ScriptedModelClient(provider, parse_script([[fault]]))
    with pytest.raises(ModelError) as caught:
        await run(client.stream(BODY, ctx()))
    assert caught.value.payload.codex_error_info == info
    if message is not None:
        assert caught.value.payload.message == message


async def test_script_faults_are_retried_and_announced_like_http() -> None:
    script = parse_script([[{"type": "truncate"}], ["recovered"]])
    client = ScriptedModelClient(replace(SCRIPTED, stream_max_retries=2), script)
    notices: list[RetryNotice] = []
    events = await run(client.stream(BODY, ctx(), on_retry=notices.append))
    assert [n.payload.message for n in notices] == ["Reconnecting... 1/2"]
    assert isinstance(done_items(events)[0], MessageItem)


def normalize(events: list[ResponseEvent]) -> list[Any]:
    """Drop ids so a scripted stream and an HTTP stream can be compared."""
    shape: list[Any] = []
    for event in events:
        if isinstance(event, OutputItemAdded | OutputItemDone):
            raw = {k: v for k, v in event.item.raw.items() if k not in ("id", "call_id", "status")}
            shape.append((type(event).__name__, raw))
        else:
            shape.append(type(event).__name__)
    return shape


async def _from_fake_server(tmp_path: Path, responses: list[Any]) -> list[ResponseEvent] | Exception:
    """Stream the first response of a fake-server script through the HTTP client (its error, if it fails)."""
    script_file = tmp_path / "script.json"
    script_file.write_text(json.dumps(responses))
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "fixtures" / "fake_responses_server.py"), str(script_file)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        http = ProviderConfig(id="p", name="p", base_url=f"http://127.0.0.1:{port}/v1", stream_max_retries=0)
        async with ModelClient(http, env={}) as client:
            try:
                return await run(client.stream(BODY, ctx()))
            except Exception as exc:
                return exc
    finally:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.close()
        server.wait(timeout=5)
        server.stdout.close()


async def test_a_script_streams_the_same_events_as_the_fake_http_server(tmp_path: Path) -> None:
    items: list[Any] = [
        {"type": "reasoning", "summary": ["plan"]},
        {"type": "message", "text": "hi there", "deltas": ["hi ", "there"]},
        {"type": "function_call", "name": "exec_command", "arguments": {"cmd": "ls"}},
        {"type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin Patch"},
    ]
    over_http = await _from_fake_server(tmp_path, [{"output": items}])
    assert isinstance(over_http, list)
    scripted = await run(ScriptedModelClient(SCRIPTED, parse_script([items])).stream(BODY, ctx()))
    assert normalize(scripted) == normalize(over_http)


async def test_the_fake_server_reads_the_product_script_format_faults_included(tmp_path: Path) -> None:
    response = ["partial answer", {"type": "failed", "code": "server_error", "message": "the model broke"}]
    over_http = await _from_fake_server(tmp_path, [response])
    with pytest.raises(Exception) as scripted:
        await run(ScriptedModelClient(SCRIPTED, parse_script([response])).stream(BODY, ctx()))
    assert isinstance(over_http, type(scripted.value)) and str(over_http) == str(scripted.value)
    assert "the model broke" in str(over_http)


def test_the_fake_server_refuses_a_script_the_product_parser_rejects(tmp_path: Path) -> None:
    script_file = tmp_path / "script.json"
    script_file.write_text(json.dumps([{"output": [{"type": "function_call", "arguments": {}}]}]))
    done = subprocess.run(
        [sys.executable, str(ROOT / "fixtures" / "fake_responses_server.py"), str(script_file)],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"fake server: script {script_file}: response 0 item 0: function_call needs a string `name`"
    ]
