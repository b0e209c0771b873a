"""``pycodex acp`` end to end: the SDK's client, a real agent process, the fake Responses model.

A prompt streams thoughts, a command behind a permission and the answer; a patch shows as a diff; a cancel
mid-command ends the prompt ``cancelled``; a later process loads the session and replays it; the session is
an ordinary stored thread that ``thread/list`` of an app-server on the same CODEX_HOME shows.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import acp
import pytest
from acp import text_block

from tests.acp_agent.conftest import STEP, EditorClient, run_agent
from tests.support.appserver_memory import MemoryAppServerClient
from tests.support.fake_model import exec_call, message, model_config

ESCALATED = {"sandbox_permissions": "require_escalated", "justification": "write outside the sandbox"}


def _texts(client: EditorClient, kind: str) -> str:
    return "".join(u.content.text for u in client.of_kind(kind))


async def _prompt(agent: Any, session_id: str, text: str) -> str:
    answer = await asyncio.wait_for(agent.conn.prompt(session_id=session_id, prompt=[text_block(text)]), STEP)
    return str(answer.stop_reason)


async def test_prompt_streams_a_command_behind_a_permission(fake_model: Any, home: Path, workspace: Path) -> None:
    model = await fake_model([
        {"output": [{"type": "reasoning", "summary": ["**Plan** run it"]},
                    exec_call("call-ran", "echo acp-ran > ran.txt && echo canary-out", **ESCALATED)]},
        {"output": [message("all done", deltas=["all ", "done"])]},
    ])
    model_config(home, model.url, approval_policy="on-request")
    client = EditorClient(permission="allow_once")
    async with run_agent(home, workspace, client) as agent:
        session = await asyncio.wait_for(agent.conn.new_session(cwd=str(workspace), mcp_servers=[]), STEP)
        assert session.modes.current_mode_id == "auto"
        assert {o.id for o in session.config_options or []} == {"mode", "model"}
        assert await _prompt(agent, session.session_id, "run the command") == "end_turn"
    assert "available_commands_update" in client.kinds()
    assert "Plan" in _texts(client, "agent_thought_chunk")
    assert _texts(client, "agent_message_chunk") == "all done"
    [start] = [u for u in client.of_kind("tool_call") if u.tool_call_id == "call-ran"]
    assert start.kind == "execute" and "echo acp-ran" in start.title
    [asked] = client.permissions
    assert asked.tool_call_id == "call-ran" and "echo acp-ran" in (asked.title or "")
    done = [u for u in client.of_kind("tool_call_update") if u.tool_call_id == "call-ran" and u.status == "completed"]
    assert done and "canary-out" in done[-1].content[0].content.text
    assert (workspace / "ran.txt").read_text() == "acp-ran\n"  # it ran, after the client allowed it
    # The session is a stored thread: an app-server on the same CODEX_HOME lists it.
    server = await MemoryAppServerClient.spawn(None, codex_home=home, cwd=workspace)
    try:
        await server.initialize()
        listed = await server.call("thread/list", {"sourceKinds": ["cli", "vscode", "exec", "appServer"]})
    finally:
        await server.close()
    assert session.session_id in [t["id"] for t in listed["data"]]


async def test_a_rejected_command_does_not_run(fake_model: Any, home: Path, workspace: Path) -> None:
    model = await fake_model([
        {"output": [exec_call("call-no", "echo no > no.txt", **ESCALATED)]},
        {"output": [message("skipped")]},
    ])
    model_config(home, model.url, approval_policy="on-request")
    client = EditorClient(permission="reject_once")
    async with run_agent(home, workspace, client) as agent:
        session = await asyncio.wait_for(agent.conn.new_session(cwd=str(workspace), mcp_servers=[]), STEP)
        assert await _prompt(agent, session.session_id, "try it") == "end_turn"
    assert not (workspace / "no.txt").exists()
    ends = [u for u in client.of_kind("tool_call_update") if u.tool_call_id == "call-no" and u.status]
    assert ends[-1].status == "failed"
    sent = json.dumps(model.requests()[-1]["body"])
    assert "rejected by user" in sent


async def test_a_patch_shows_as_a_diff(fake_model: Any, home: Path, workspace: Path) -> None:
    (workspace / "notes.txt").write_text("one\ntwo\nthree\n")
    patch = "*** Begin Patch\n*** Update File: notes.txt\n@@\n one\n-two\n+TWO\n three\n*** End Patch\n"
    model = await fake_model([
        {"output": [{"type": "custom_tool_call", "name": "apply_patch", "call_id": "call-patch", "input": patch}]},
        {"output": [message("patched")]},
    ])
    model_config(home, model.url)
    client = EditorClient()
    async with run_agent(home, workspace, client) as agent:
        session = await asyncio.wait_for(agent.conn.new_session(cwd=str(workspace), mcp_servers=[]), STEP)
        assert await _prompt(agent, session.session_id, "patch it") == "end_turn"
    [start] = [u for u in client.of_kind("tool_call") if u.tool_call_id == "call-patch"]
    assert start.kind == "edit"
    [diff] = start.content
    assert diff.type == "diff" and diff.path == str(workspace / "notes.txt")
    assert "two" in diff.old_text and "TWO" in diff.new_text and "TWO" not in diff.old_text
    assert (workspace / "notes.txt").read_text() == "one\nTWO\nthree\n"


async def test_cancel_mid_command_stops_the_prompt(fake_model: Any, home: Path, workspace: Path) -> None:
    model = await fake_model([
        {"output": [exec_call("call-sleep", "sleep 60", yield_time_ms=60000)]},
        {"output": [message("never")]},
    ])
    model_config(home, model.url)
    client = EditorClient()
    async with run_agent(home, workspace, client) as agent:
        session = await asyncio.wait_for(agent.conn.new_session(cwd=str(workspace), mcp_servers=[]), STEP)
        prompt = asyncio.ensure_future(agent.conn.prompt(session_id=session.session_id, prompt=[text_block("sleep")]))
        await client.wait_for(lambda: any(u.tool_call_id == "call-sleep" for u in client.of_kind("tool_call")))
        await agent.conn.cancel(session_id=session.session_id)
        answer = await asyncio.wait_for(prompt, STEP)
    assert answer.stop_reason == "cancelled"
    assert len(model.requests()) == 1  # the turn ended there


async def test_load_replays_the_session(fake_model: Any, home: Path, workspace: Path) -> None:
    model = await fake_model([
        {"output": [exec_call("call-first", "echo first-output")]},
        {"output": [message("first answer")]},
        {"output": [message("second answer")]},
    ])
    model_config(home, model.url)
    async with run_agent(home, workspace, EditorClient()) as agent:
        session = await asyncio.wait_for(agent.conn.new_session(cwd=str(workspace), mcp_servers=[]), STEP)
        assert await _prompt(agent, session.session_id, "first question") == "end_turn"
    client = EditorClient()
    async with run_agent(home, workspace, client) as agent:  # a new process on the same CODEX_HOME
        loaded = await asyncio.wait_for(
            agent.conn.load_session(cwd=str(workspace), session_id=session.session_id, mcp_servers=[]), STEP)
        assert loaded is not None and loaded.modes is not None
        replayed = list(client.kinds())
        assert await _prompt(agent, session.session_id, "second question") == "end_turn"
    assert _texts(client, "user_message_chunk") == "first question"
    assert replayed.index("user_message_chunk") < replayed.index("tool_call") < replayed.index("agent_message_chunk")
    [tool] = [u for u in client.of_kind("tool_call") if u.tool_call_id == "call-first"]
    assert tool.status == "completed"
    assert "first answer" in _texts(client, "agent_message_chunk")
    last = json.dumps(model.requests()[-1]["body"])
    assert "first question" in last and "first-output" in last and "first answer" in last


async def test_load_of_an_unknown_session_is_not_found(fake_model: Any, home: Path, workspace: Path) -> None:
    model = await fake_model([{"output": [message("unused")]}])
    model_config(home, model.url)
    async with run_agent(home, workspace, EditorClient()) as agent:
        with pytest.raises(acp.RequestError) as caught:
            await asyncio.wait_for(agent.conn.load_session(
                cwd=str(workspace), session_id="01a23bb3-7d59-7606-ab2e-973d80f77fc0", mcp_servers=[]), STEP)
        with pytest.raises(acp.RequestError) as unknown:
            await asyncio.wait_for(agent.conn.prompt(session_id="nope", prompt=[text_block("x")]), STEP)
    assert caught.value.code == -32002 and "01a23bb3-7d59-7606-ab2e-973d80f77fc0" in str(caught.value)
    assert unknown.value.code == -32602


async def test_a_patch_that_needs_approval_asks_with_its_diff(fake_model: Any, home: Path, workspace: Path) -> None:
    patch = "*** Begin Patch\n*** Add File: asked.txt\n+approved content\n*** End Patch\n"
    model = await fake_model([
        {"output": [{"type": "custom_tool_call", "name": "apply_patch", "call_id": "call-ask", "input": patch}]},
        {"output": [message("added")]},
    ])
    model_config(home, model.url, approval_policy="on-request", sandbox_mode="read-only")
    client = EditorClient(permission="allow_once")
    async with run_agent(home, workspace, client) as agent:
        session = await asyncio.wait_for(agent.conn.new_session(cwd=str(workspace), mcp_servers=[]), STEP)
        assert session.modes.current_mode_id == "read-only"
        assert await _prompt(agent, session.session_id, "add it") == "end_turn"
    [asked] = client.permissions
    assert asked.tool_call_id == "call-ask" and asked.kind == "edit"
    [diff] = asked.content
    assert (diff.path, diff.old_text, diff.new_text) == (str(workspace / "asked.txt"), None, "approved content\n")
    assert (workspace / "asked.txt").read_text() == "approved content\n"


async def test_a_cancelled_permission_cancels_the_prompt(fake_model: Any, home: Path, workspace: Path) -> None:
    model = await fake_model([
        {"output": [exec_call("call-cancel", "echo never > never.txt", **ESCALATED)]},
        {"output": [message("unused")]},
    ])
    model_config(home, model.url, approval_policy="on-request")
    client = EditorClient(permission=None)  # the user cancelled while the question was open
    async with run_agent(home, workspace, client) as agent:
        session = await asyncio.wait_for(agent.conn.new_session(cwd=str(workspace), mcp_servers=[]), STEP)
        assert await _prompt(agent, session.session_id, "try") == "cancelled"
    assert [p.tool_call_id for p in client.permissions] == ["call-cancel"]
    assert not (workspace / "never.txt").exists()
