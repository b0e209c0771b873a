"""exec_command on a remote exec-server that dies mid-command: the wait ends when the connection does.

Codex 0.169 keeps waiting for the whole ``yield_time_ms`` and then reports the command as still running
(docs/turns_end_codex_0169.md). pycodex tells the model the process was lost, completes the command's item
as failed without an exit code, and the turn goes on to its end.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from tests.app_server.tools.test_patch_tool import outputs
from tests.support.execserver import run_ws_server
from tests.support.fake_model import exec_call, message, model_config


async def test_a_dead_exec_server_ends_the_command_wait_and_the_turn_completes(
    app_server, fake_model, codex_home: Path, workspace: Path, tmp_path: Path
) -> None:
    # The command prints, then sleeps far past the test's bounds; the model allows a 30 s yield.
    cmd = "echo started; exec sleep 120"
    model = await fake_model([
        {"output": [exec_call("c1", cmd, workdir=str(workspace), yield_time_ms=30_000)]},
        {"output": [message("done")]},
    ])
    model_config(codex_home, model.url)
    (tmp_path / "server").mkdir()
    with run_ws_server("pycodex", tmp_path / "server") as server:
        client = await app_server(env={"CODEX_EXEC_SERVER_URL": server.url})
        thread = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]
        await client.call("turn/start", {"threadId": thread["id"], "input": [{"type": "text", "text": "go"}]})
        await client.wait_notification("item/commandExecution/outputDelta",
                                       lambda p: "started" in p["delta"], timeout=15)
        os.killpg(server.proc.pid, signal.SIGKILL)  # the executor and its command die together
        done = await client.wait_notification("turn/completed", timeout=15)
    assert done["params"]["turn"]["status"] == "completed"
    text = outputs(model)["c1"]
    assert text.startswith("exec_command failed: exec-server connection closed"), text
    assert "Process running with session ID" not in text and "Process exited with code" not in text
    assert "started" in text  # what the command printed before the executor died reached the model
    [item] = [n["params"]["item"] for n in client.notifications("item/completed")
              if n["params"]["item"]["type"] == "commandExecution"]
    assert item["status"] == "failed" and item["exitCode"] is None
    assert "started" in (item["aggregatedOutput"] or "")
