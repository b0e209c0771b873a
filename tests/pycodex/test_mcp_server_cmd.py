"""`pycodex mcp-server` driven by the official MCP SDK's stdio client: `codex` starts a session that runs a
command on the fake model's request, `codex-reply` continues the same thread."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.support.fake_model import FakeModel, exec_call, message, model_config

REPO = Path(__file__).resolve().parents[2]


def _server(home: Path, work: Path) -> StdioServerParameters:
    env = {**os.environ, "CODEX_HOME": str(home), "PYTHONPATH": str(REPO)}
    return StdioServerParameters(command=sys.executable, args=["-m", "pycodex", "mcp-server"], env=env, cwd=work)


def _text(result: Any) -> str:
    return "".join(block.text for block in result.content if block.type == "text")


@pytest.fixture
async def model(tmp_path: Path) -> Any:
    script = [{"output": [exec_call("c1", "echo hello-from-mcp")]},
              {"output": [message("ran it")]}, {"output": [message("second answer")]}]
    fake = await FakeModel.start(script, tmp_path / "model")
    yield fake
    await fake.stop()


async def test_codex_then_codex_reply_continue_one_thread(tmp_path: Path, model: FakeModel) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    model_config(home, model.url)
    async with stdio_client(_server(home, work)) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert sorted(listed) == ["codex", "codex-reply"]
        assert listed["codex"].inputSchema["required"] == ["prompt"]
        assert "approval-policy" in listed["codex"].inputSchema["properties"]

        first = await session.call_tool("codex", {"prompt": "run the greeting", "cwd": str(work),
                                                  "sandbox": "workspace-write", "approval-policy": "never"})
        assert not first.isError, _text(first)
        assert _text(first) == "ran it"
        assert first.structuredContent is not None
        thread_id = first.structuredContent["threadId"]
        assert first.structuredContent["content"] == "ran it" and thread_id

        second = await session.call_tool("codex-reply", {"threadId": thread_id, "prompt": "and again"})
        assert not second.isError, _text(second)
        assert second.structuredContent == {"threadId": thread_id, "content": "second answer"}

        missing = await session.call_tool("codex-reply", {"prompt": "no thread"})
        assert missing.isError and "threadId" in _text(missing)
        unknown = await session.call_tool("codex-reply", {"threadId": "00000000-0000-4000-8000-000000000000",
                                                          "prompt": "hello?"})
        assert unknown.isError and _text(unknown).startswith("thread/resume failed"), _text(unknown)
        bad = await session.call_tool("codex", {"prompt": "x", "sandbox": "everything"})
        assert bad.isError and "everything" in _text(bad)

    requests = model.requests()
    assert len(requests) == 3
    # The command really ran: its output went back to the model on the second request.
    outputs = [item for item in requests[1]["body"]["input"] if item.get("type") == "function_call_output"]
    assert outputs and "hello-from-mcp" in json.dumps(outputs)
    # The reply continued the same conversation: the first prompt is still in the third request's history.
    assert "run the greeting" in json.dumps(requests[2]["body"]["input"])
    assert "and again" in json.dumps(requests[2]["body"]["input"])
