"""Cross-implementation execution environments (issue 4): our app-server on Codex's exec-server and
Codex's app-server on our exec-server, both completing the two-call exec turn. A marker variable set
only in the exec-server's environment proves where the command ran."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from pathlib import Path

import pytest

from tests.support.fake_model import exec_call, message, model_config
from tests.support.procs import stop_process
from tests.support.tools import require_codex

pytestmark = pytest.mark.codex

MARKER = "PYCODEX_EXEC_MARKER"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _start_exec_server(argv: list[str], home: Path, marker: str) -> asyncio.subprocess.Process:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "OPENAI_"))}
    env.update({MARKER: marker, "CODEX_HOME": str(home)})
    home.mkdir(parents=True, exist_ok=True)
    return await asyncio.create_subprocess_exec(
        *argv, env=env, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )


async def _wait_listening(port: int, proc: asyncio.subprocess.Process) -> None:
    for _ in range(200):
        if proc.returncode is not None:
            raise AssertionError(f"exec-server exited with {proc.returncode}")
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.05)
            continue
        writer.close()
        return
    raise AssertionError("exec-server did not start listening")


@pytest.mark.parametrize("direction", ["pycodex-app_on_codex-exec", "codex-app_on_pycodex-exec"])
async def test_two_call_exec_turn_runs_in_the_exec_server_environment(
    direction: str, app_server, fake_model, codex_home: Path, workspace: Path, tmp_path: Path
) -> None:
    codex = require_codex()
    model = await fake_model([
        {"output": [exec_call("call_1", f"echo marker=${MARKER}")]},
        {"output": [message("done")]},
    ])
    model_config(codex_home, model.url)
    port = _free_port()
    url = f"ws://127.0.0.1:{port}"
    if direction.startswith("pycodex-app"):
        exec_argv = [str(codex), "exec-server", "--listen", url]
        app_argv = None
    else:
        exec_argv = [sys.executable, "-m", "pycodex", "exec-server", "--listen", url]
        app_argv = [str(codex), "app-server"]
    proc = await _start_exec_server(exec_argv, tmp_path / "exec_home", "only-in-exec-server")
    try:
        await _wait_listening(port, proc)
        client = await app_server(argv=app_argv, env={"CODEX_EXEC_SERVER_URL": url})
        thread = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]
        assert thread["environments"][0]["environmentId"] == "remote"
        await client.call("turn/start", {"threadId": thread["id"], "input": [{"type": "text", "text": "run"}]})
        done = await client.wait_notification("turn/completed", timeout=30)
        assert done["params"]["turn"]["status"] == "completed"
        follow_up = model.requests()[1]["body"]["input"]
        output = next(i["output"] for i in follow_up if i.get("type") == "function_call_output")
        assert "marker=only-in-exec-server" in output
        assert "Process exited with code 0" in output
    finally:
        await stop_process(proc, timeout=5)
