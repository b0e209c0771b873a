"""Session controls of ``pycodex acp``: modes, the model picker, slash commands, session/list, authenticate."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import acp
import pytest
from acp import text_block

from tests.acp_agent.conftest import STEP, EditorClient, run_agent
from tests.support.appserver_memory import MemoryAppServerClient
from tests.support.fake_model import message, model_config


async def test_mode_and_model_apply_to_the_next_turn(fake_model: Any, home: Path, workspace: Path) -> None:
    model = await fake_model({"responses": [{"output": [message("ok")]}], "when_exhausted": "repeat_last"})
    model_config(home, model.url)
    client = EditorClient()
    async with run_agent(home, workspace, client) as agent:
        session = await asyncio.wait_for(agent.conn.new_session(cwd=str(workspace), mcp_servers=[]), STEP)
        sid = session.session_id
        await asyncio.wait_for(agent.conn.set_session_mode(session_id=sid, mode_id="read-only"), STEP)
        picked = await asyncio.wait_for(
            agent.conn.set_config_option(config_id="model", session_id=sid, value="other-model"), STEP)
        await asyncio.wait_for(agent.conn.prompt(session_id=sid, prompt=[text_block("hi")]), STEP)
        with pytest.raises(acp.RequestError) as caught:
            await asyncio.wait_for(agent.conn.set_session_mode(session_id=sid, mode_id="nope"), STEP)
    assert caught.value.code == -32602
    assert [u.current_mode_id for u in client.of_kind("current_mode_update")] == ["read-only"]
    [model_option] = [o for o in picked.config_options if o.id == "model"]
    assert model_option.current_value == "other-model"
    body = model.requests()[-1]["body"]
    assert body["model"] == "other-model"
    assert "The sandbox is read-only" in json.dumps(body)


async def test_rename_command_and_session_list(fake_model: Any, home: Path, workspace: Path) -> None:
    model = await fake_model([{"output": [message("unused")]}])
    model_config(home, model.url)
    client = EditorClient()
    async with run_agent(home, workspace, client) as agent:
        session = await asyncio.wait_for(agent.conn.new_session(cwd=str(workspace), mcp_servers=[]), STEP)
        [commands] = client.of_kind("available_commands_update")
        assert {"compact", "rename", "review"} <= {c.name for c in commands.available_commands}
        # A thread is stored (and listed) from its first turn on.
        await asyncio.wait_for(agent.conn.prompt(session_id=session.session_id, prompt=[text_block("hello")]), STEP)
        answer = await asyncio.wait_for(
            agent.conn.prompt(session_id=session.session_id, prompt=[text_block("/rename acp named")]), STEP)
        listed = await asyncio.wait_for(agent.conn.list_sessions(cwd=str(workspace)), STEP)
    assert answer.stop_reason == "end_turn"
    assert [u.title for u in client.of_kind("session_info_update")] == ["acp named"]
    assert len(model.requests()) == 1  # the command is not a turn
    assert [(s.session_id, s.title) for s in listed.sessions] == [(session.session_id, "acp named")]
    server = await MemoryAppServerClient.spawn(None, codex_home=home, cwd=workspace)
    try:
        await server.initialize()
        read = await server.call("thread/read", {"threadId": session.session_id})
    finally:
        await server.close()
    assert read["thread"]["name"] == "acp named"


async def test_authenticate_with_an_api_key(fake_model: Any, home: Path, workspace: Path) -> None:
    model = await fake_model([{"output": [message("unused")]}])
    model_config(home, model.url)
    async with run_agent(home, workspace, EditorClient()) as agent:
        with pytest.raises(acp.RequestError) as missing:
            await asyncio.wait_for(agent.conn.authenticate(method_id="openai-api-key"), STEP)
        with pytest.raises(acp.RequestError) as unknown:
            await asyncio.wait_for(agent.conn.authenticate(method_id="chatgpt"), STEP)
    assert missing.value.code == -32000 and "OPENAI_API_KEY" in json.dumps(missing.value.data)
    assert unknown.value.code == -32602
    async with run_agent(home, workspace, EditorClient(), env={"OPENAI_API_KEY": "sk-acp-test"}) as agent:
        await asyncio.wait_for(agent.conn.authenticate(method_id="openai-api-key"), STEP)
    stored = json.loads((home / "auth.json").read_text())
    assert stored["OPENAI_API_KEY"] == "sk-acp-test"


async def test_the_clients_mcp_servers_serve_the_session(fake_model: Any, home: Path, workspace: Path) -> None:
    from acp.schema import McpServerStdio

    from tests.support.mcp_servers import CALC_SERVER

    call = {"type": "function_call", "namespace": "mcp__calc", "name": "echo", "call_id": "call-mcp",
            "arguments": json.dumps({"text": "echoed-through-mcp"})}
    model = await fake_model([{"output": [call]}, {"output": [message("done")]}])
    model_config(home, model.url, approval_policy="on-request")
    client = EditorClient(permission="allow_once")
    server = McpServerStdio(name="calc", command=sys.executable, args=[str(CALC_SERVER), "stdio"], env=[])
    async with run_agent(home, workspace, client) as agent:
        session = await asyncio.wait_for(agent.conn.new_session(cwd=str(workspace), mcp_servers=[server]), STEP)
        answer = await asyncio.wait_for(
            agent.conn.prompt(session_id=session.session_id, prompt=[text_block("echo")]), STEP)
    assert answer.stop_reason == "end_turn"
    [start] = [u for u in client.of_kind("tool_call") if u.tool_call_id == "call-mcp"]
    assert start.title == "calc.echo"
    [asked] = client.permissions  # the tool's approval, asked on the tool call
    assert (asked.tool_call_id, asked.title) == ("call-mcp", "calc.echo")
    assert "echoed-through-mcp" in json.dumps(model.requests()[-1]["body"]["input"][-1])


async def test_compact_command_runs_a_compaction_turn(fake_model: Any, home: Path, workspace: Path) -> None:
    model = await fake_model({"responses": [{"output": [message("first")]}, {"output": [message("the summary")]}],
                              "when_exhausted": "error"})
    model_config(home, model.url)
    async with run_agent(home, workspace, EditorClient()) as agent:
        session = await asyncio.wait_for(agent.conn.new_session(cwd=str(workspace), mcp_servers=[]), STEP)
        await asyncio.wait_for(agent.conn.prompt(session_id=session.session_id, prompt=[text_block("hello")]), STEP)
        answer = await asyncio.wait_for(
            agent.conn.prompt(session_id=session.session_id, prompt=[text_block("/compact")]), STEP)
    assert answer.stop_reason == "end_turn"
    _turn, compaction = model.requests()
    assert compaction["body"]["tools"] == [] and "hello" in json.dumps(compaction["body"]["input"])
    assert "first" in json.dumps(compaction["body"]["input"])  # the history it summarizes


async def test_review_command_reviews_in_the_session(fake_model: Any, home: Path, workspace: Path) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", str(workspace)], check=True, timeout=30)
    model = await fake_model({"responses": [{"output": [message("looks fine")]}], "when_exhausted": "repeat_last"})
    model_config(home, model.url)
    client = EditorClient()
    async with run_agent(home, workspace, client) as agent:
        session = await asyncio.wait_for(agent.conn.new_session(cwd=str(workspace), mcp_servers=[]), STEP)
        answer = await asyncio.wait_for(
            agent.conn.prompt(session_id=session.session_id, prompt=[text_block("/review")]), STEP)
    assert answer.stop_reason == "end_turn"
    assert "looks fine" in json.dumps([u.content.text for u in client.of_kind("agent_message_chunk")])
    assert "git diff" in json.dumps(model.requests()[0]["body"]["input"])  # the uncommitted-changes review prompt
