"""The spans of a turn's outgoing calls: an MCP ``tools/call`` (the real calc server on stdio) and the
exec-server round trips of a command run on a remote executor reached through the relay, each under the
tool call that made it."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.otel.otlp_receiver import Receiver, otlp_receiver
from tests.support.fake_model import exec_call, message, model_config, run_turn
from tests.support.mcp_servers import CALC_SERVER
from tests.support.remote import ENV_ID, TOKEN, running_executor, running_relay


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with otlp_receiver() as running:
        yield running


def _config(codex_home: Path, url: str, receiver: Receiver) -> None:
    model_config(codex_home, url)
    args = json.dumps([str(CALC_SERVER), "stdio", f"marker-{uuid.uuid4().hex}"])
    with (codex_home / "config.toml").open("a") as out:
        out.write(f"\n[mcp_servers.calc]\ncommand = {json.dumps(sys.executable)}\nargs = {args}\n"
                  '[mcp_servers.calc.tools.echo]\napproval_mode = "approve"\n\n'
                  f'[otel]\ntrace_exporter = {{ otlp-http = {{ endpoint = "{receiver.url}/v1/traces", '
                  'protocol = "binary" } }\n')


async def test_mcp_and_exec_server_calls_are_spans_of_their_tool_call(
    receiver: Receiver, app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    mcp = {"type": "function_call", "namespace": "mcp__calc", "name": "echo", "call_id": "call-mcp",
           "arguments": json.dumps({"text": "hi"})}
    model = await fake_model([[mcp, exec_call("call-exec", "echo remote-run")], [message("done")]])
    _config(codex_home, model.url, receiver)
    async with running_relay() as relay, running_executor(relay):
        client = await app_server(env={"CODEX_EXEC_SERVER_NOISE_REGISTRY_URL": relay.registry_url,
                                       "CODEX_EXEC_SERVER_NOISE_ENVIRONMENT_ID": ENV_ID,
                                       "CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN": TOKEN})
        thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
        await client.wait_notification("mcpServer/startupStatus/updated",
                                       lambda p: p["name"] == "calc" and p["status"] == "ready", timeout=30)
        assert (await run_turn(client, thread_id, "echo and run", timeout=30))["status"] == "completed"
        await asyncio.to_thread(receiver.wait_for, lambda r: any(s.name == "invoke_agent pycodex" for s in r.spans))
        await client.close()
    spans = receiver.named("")
    (turn,) = [s for s in spans if s.name == "invoke_agent pycodex"]
    (echo,) = [s for s in spans if s.name == "execute_tool echo"]
    (command,) = [s for s in spans if s.name == "execute_tool exec_command"]
    assert echo.parent_id == command.parent_id == turn.span_id
    (call,) = [s for s in spans if s.name == "mcp calc/echo"]
    assert call.parent_id == echo.span_id and call.attributes["mcp.server.name"] == "calc"
    round_trips = [s for s in spans if s.name.startswith("exec ") and s.parent_id == command.span_id]
    assert "exec process/start" in {s.name for s in round_trips}
    assert all(s.attributes["rpc.system"] == "jsonrpc" and s.kind == 3 for s in round_trips)
