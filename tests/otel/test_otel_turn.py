"""A real turn exported over OTLP/HTTP to a local collector: the span tree, its GenAI attributes, the parent
taken from the request's W3C ``trace`` field, the metrics and logs, and what is never exported (the prompt,
unless ``log_user_prompt = true``, and the provider's API key).

The turn runs on the in-memory app-server against the fake Responses server: the model asks for one
escalated command (so the user is asked), the test approves it, and the model answers. The turn's end
flushes the batch; the test waits (bounded) for the collector to have it.
"""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path
from typing import Any

import pytest

from tests.otel.otlp_receiver import Receiver, Span, otlp_receiver
from tests.support.fake_model import exec_call, message, model_config

API_KEY = "sk-otel-test-" + "0123456789abcdef"
PROMPT = "please run the otel-probe command"
TURN = "invoke_agent pycodex"


@pytest.fixture
def receiver() -> Any:
    """The collector; tests ask for it before `app_server`, so it outlives the server's shutdown flush."""
    with otlp_receiver() as running:
        yield running


def _configure(codex_home: Path, url: str, receiver: Receiver, *, log_user_prompt: bool = False) -> None:
    model_config(codex_home, url, approval_policy="on-request")
    config = codex_home / "config.toml"
    with config.open("a") as out:
        out.write('env_key = "MOCK_API_KEY"\n\n[otel]\nenvironment = "test"\n')
        out.write(f"log_user_prompt = {str(log_user_prompt).lower()}\n")
        for key, signal in (("trace_exporter", "traces"), ("metrics_exporter", "metrics"), ("exporter", "logs")):
            out.write(f'{key} = {{ otlp-http = {{ endpoint = "{receiver.url}/v1/{signal}", protocol = "binary", '
                      f'headers = {{ "x-collector-token" = "collector-secret-value" }} }} }}\n')


async def _approved_turn(client: Any, thread_id: str, trace: dict[str, str] | None, text: str = PROMPT) -> None:
    request: dict[str, Any] = {"id": 900, "method": "turn/start",
                               "params": {"threadId": thread_id, "input": [{"type": "text", "text": text}]}}
    if trace is not None:
        request["trace"] = trace
    await client.send(request)
    response = await client.wait_response(900, timeout=15)
    turn_id = response["result"]["turn"]["id"]
    approval = await client.wait_server_request("item/commandExecution/requestApproval", timeout=15)
    await client.respond(approval["id"], {"decision": "accept"})
    done = await client.wait_notification("turn/completed", lambda p: p["turn"]["id"] == turn_id, timeout=20)
    assert done["params"]["turn"]["status"] == "completed"


def _one(spans: list[Span], name: str) -> Span:
    found = [s for s in spans if s.name == name]
    assert len(found) == 1, (name, [s.name for s in spans])
    return found[0]


async def _run(app_server: Any, fake_model: Any, codex_home: Path, workspace: Path, receiver: Receiver,
               trace: dict[str, str] | None, *, log_user_prompt: bool = False, text: str = PROMPT) -> list[Span]:
    model = await fake_model([
        {"output": [exec_call("call-1", "echo otel-probe", sandbox_permissions="require_escalated",
                              justification="probe")],
         "usage": {"input_tokens": 21, "output_tokens": 4, "total_tokens": 25}},
        {"output": [message("probe done")], "usage": {"input_tokens": 40, "output_tokens": 3, "total_tokens": 43}},
    ])
    _configure(codex_home, model.url, receiver, log_user_prompt=log_user_prompt)
    client = await app_server(env={"MOCK_API_KEY": API_KEY})
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await _approved_turn(client, thread_id, trace, text)
    await asyncio.to_thread(receiver.wait_for, lambda r: any(s.name == TURN for s in r.spans)
                            and "pycodex.turn.duration" in r.metrics)
    return receiver.named("")


async def test_a_turn_is_one_span_tree_under_the_callers_traceparent(
    receiver: Receiver, app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    trace_id, parent_id = secrets.token_hex(16), secrets.token_hex(8)
    spans = await _run(app_server, fake_model, codex_home, workspace, receiver,
                       {"traceparent": f"00-{trace_id}-{parent_id}-01"})

    request = _one(spans, "turn/start")
    assert (request.trace_id, request.parent_id) == (trace_id, parent_id)
    assert request.attributes["rpc.method"] == "turn/start" and request.kind == 2  # SERVER
    turn = _one(spans, TURN)
    assert (turn.trace_id, turn.parent_id) == (trace_id, request.span_id)
    assert turn.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert turn.attributes["pycodex.turn.outcome"] == "complete"
    assert turn.resource["service.name"] == "pycodex"
    assert turn.resource["deployment.environment.name"] == "test"

    chats = [s for s in spans if s.name == "chat mock-model"]
    assert [s.parent_id for s in chats] == [turn.span_id, turn.span_id]
    first, second = sorted(chats, key=lambda s: s.attributes["gen_ai.usage.input_tokens"])
    assert first.attributes["gen_ai.request.model"] == "mock-model"
    assert first.attributes["gen_ai.operation.name"] == "chat"
    assert (first.attributes["gen_ai.usage.input_tokens"], first.attributes["gen_ai.usage.output_tokens"]) == (21, 4)
    assert first.attributes["gen_ai.response.finish_reasons"] == ["tool_calls"]
    assert second.attributes["gen_ai.response.finish_reasons"] == ["stop"]
    assert first.kind == 3  # CLIENT

    tool = _one(spans, "execute_tool exec_command")
    assert tool.parent_id == turn.span_id
    assert tool.attributes["gen_ai.tool.call.id"] == "call-1"
    approval = _one(spans, "approval item/commandExecution/requestApproval")
    assert approval.parent_id == tool.span_id
    assert approval.attributes["pycodex.approval.decision"] == "accept"
    # Every span of the turn is in the caller's trace (initialize and thread/start start their own).
    assert {s.trace_id for s in spans if "rpc.method" not in s.attributes} == {trace_id}

    assert {"gen_ai.client.token.usage", "pycodex.tool.calls", "pycodex.server.request_queue.depth"} <= set(
        receiver.metrics)


async def test_nothing_secret_is_exported_by_default(
    receiver: Receiver, app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    spans = await _run(app_server, fake_model, codex_home, workspace, receiver, None,
                       text=f"{PROMPT} with {API_KEY}")
    assert _one(spans, "turn/start").parent_id == ""  # no trace field: the request starts a trace
    assert "pycodex.user_prompt" not in _one(spans, TURN).attributes
    exported = b"".join(receiver.bodies)
    assert b"otel-probe" not in exported  # neither the prompt nor the command line
    assert API_KEY.encode() not in exported
    assert b"collector-secret-value" not in exported


async def test_log_user_prompt_exports_the_prompt_with_its_secrets_redacted(
    receiver: Receiver, app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    spans = await _run(app_server, fake_model, codex_home, workspace, receiver, None, log_user_prompt=True,
                       text=f"{PROMPT} with {API_KEY}")
    assert _one(spans, TURN).attributes["pycodex.user_prompt"] == f"{PROMPT} with [REDACTED]"
    assert API_KEY.encode() not in b"".join(receiver.bodies)
