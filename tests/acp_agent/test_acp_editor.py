"""The ``editor`` environment: a session's patches and commands run through the ACP client's fs/* and terminal/*.

The client keeps written files in its buffers (never on disk) and holds an unsaved buffer of a file whose disk
copy differs: the patch must apply to the buffer and reach the client as ``fs/write_text_file``, and the
command must run in a ``terminal/create`` terminal. A client without those capabilities cannot ask for it.
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
from tests.support.fake_model import exec_call, message, model_config
from tests.support.tools import require_landlock

EDITOR = {"environment": "editor"}
PATCH = ("*** Begin Patch\n*** Add File: new.txt\n+hello editor\n*** Update File: notes.txt\n@@\n-unsaved line\n"
         "+edited line\n*** End Patch\n")


async def test_patches_and_commands_go_through_the_editor(fake_model: Any, home: Path, workspace: Path) -> None:
    (workspace / "notes.txt").write_text("saved line\n")
    model = await fake_model([
        {"output": [{"type": "custom_tool_call", "name": "apply_patch", "call_id": "call-edit", "input": PATCH}]},
        {"output": [exec_call("call-term", "echo from-terminal")]},
        {"output": [message("edited")]},
    ])
    model_config(home, model.url)
    client = EditorClient()
    client.buffers[str(workspace / "notes.txt")] = "unsaved line\n"  # open in the editor, not saved
    async with run_agent(home, workspace, client, editor=True) as agent:
        session = await asyncio.wait_for(
            agent.conn.new_session(cwd=str(workspace), mcp_servers=[], pycodex=EDITOR), STEP)
        answer = await asyncio.wait_for(
            agent.conn.prompt(session_id=session.session_id, prompt=[text_block("edit")]), STEP)
    assert answer.stop_reason == "end_turn"
    assert (str(workspace / "new.txt"), "hello editor\n") in client.writes
    assert (str(workspace / "notes.txt"), "edited line\n") in client.writes
    assert not (workspace / "new.txt").exists()  # the agent never wrote it itself
    assert (workspace / "notes.txt").read_text() == "saved line\n"
    assert str(workspace / "notes.txt") in client.reads
    assert any("echo from-terminal" in " ".join(argv) for argv in client.commands)
    assert "from-terminal" in json.dumps(model.requests()[-1]["body"])


async def test_the_editor_needs_the_client_capabilities(fake_model: Any, home: Path, workspace: Path) -> None:
    model = await fake_model([{"output": [message("unused")]}])
    model_config(home, model.url)
    async with run_agent(home, workspace, EditorClient(), editor=False) as agent:
        with pytest.raises(acp.RequestError) as caught:
            await asyncio.wait_for(agent.conn.new_session(cwd=str(workspace), mcp_servers=[], pycodex=EDITOR), STEP)
    assert caught.value.code == -32602
    assert "fs.readTextFile, fs.writeTextFile and terminal" in json.dumps(caught.value.data)


@pytest.mark.parametrize("chosen_by", ["config", "flag"])
async def test_config_or_flag_makes_the_editor_the_default(
    chosen_by: str, fake_model: Any, home: Path, workspace: Path
) -> None:
    model = await fake_model([
        {"output": [{"type": "custom_tool_call", "name": "apply_patch", "call_id": "call-add",
                     "input": "*** Begin Patch\n*** Add File: by-config.txt\n+x\n*** End Patch\n"}]},
        {"output": [message("done")]},
    ])
    model_config(home, model.url, extra='\n[acp]\nenvironment = "editor"\n' if chosen_by == "config" else "")
    client = EditorClient()
    args = ("--environment", "editor") if chosen_by == "flag" else ()
    async with run_agent(home, workspace, client, editor=True, args=args) as agent:
        session = await asyncio.wait_for(agent.conn.new_session(cwd=str(workspace), mcp_servers=[]), STEP)
        await asyncio.wait_for(agent.conn.prompt(session_id=session.session_id, prompt=[text_block("add")]), STEP)
    assert client.writes == [(str(workspace / "by-config.txt"), "x\n")]
    assert not (workspace / "by-config.txt").exists()


async def test_the_sandbox_still_wraps_editor_commands(fake_model: Any, home: Path, workspace: Path) -> None:
    require_landlock()
    model = await fake_model([
        {"output": [exec_call("call-write", "echo x > blocked.txt")]},
        {"output": [message("tried")]},
    ])
    model_config(home, model.url, sandbox_mode="read-only")
    client = EditorClient()
    async with run_agent(home, workspace, client, editor=True) as agent:
        session = await asyncio.wait_for(
            agent.conn.new_session(cwd=str(workspace), mcp_servers=[], pycodex=EDITOR), STEP)
        await asyncio.wait_for(agent.conn.prompt(session_id=session.session_id, prompt=[text_block("write")]), STEP)
    [argv] = client.commands
    assert argv[-1] == "echo x > blocked.txt" and "--" in argv and argv.index("--") > 0  # the Landlock launcher
    assert not (workspace / "blocked.txt").exists()
