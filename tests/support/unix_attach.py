"""Helpers for the unix-socket, daemon and proxy tests: a turn with an approval, and the daemon's clean-up."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from pathlib import Path
from typing import Any

from pycodex.transport.unix_paths import default_socket_path, runtime_socket_path
from tests.support.fake_model import exec_call, message

#: One escalated command (the approval), then the answer after it.
APPROVAL_SCRIPT = [
    {"output": [exec_call("call_1", "printf hi > out.txt", sandbox_permissions="require_escalated",
                          justification="write a file")]},
    {"output": [message("done writing")]},
]


async def turn_with_an_approval(client: Any, workspace: Path) -> dict[str, Any]:
    """initialize, thread/start, and a turn whose command is approved; returns the completed turn."""
    await client.initialize(name="unix_client")
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    turn = (await client.call("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "go"}]}))["turn"]
    request = await client.wait_server_request("item/commandExecution/requestApproval", timeout=20)
    assert request["params"]["threadId"] == thread_id and request["params"]["itemId"] == "call_1"
    await client.respond(request["id"], {"decision": "accept"})
    done = await client.wait_notification("turn/completed", lambda p: p["turn"]["id"] == turn["id"], timeout=20)
    final: dict[str, Any] = done["params"]["turn"]
    return final


async def run_cli(env: dict[str, str], *args: str, timeout: float = 60) -> tuple[int, str, str]:
    """``python -m pycodex ARGS`` to completion: exit status, stdout, stderr."""
    import sys

    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "pycodex", *args, env=env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def daemon_pid(codex_home: Path) -> int | None:
    """The pid in the daemon's record, if there is one."""
    try:
        pid = json.loads((codex_home / "app-server-daemon" / "daemon.pid").read_text())["pid"]
    except (OSError, ValueError, KeyError):
        return None
    return int(pid)


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


async def end_daemon(codex_home: Path, timeout: float = 5.0) -> None:
    """End the daemon a test left on ``codex_home`` (by its recorded pid): SIGTERM, then SIGKILL after a bounded
    wait; a socket it could not remove (killed) is removed from the runtime folder."""
    pid = daemon_pid(codex_home)
    if pid is not None and _running(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while _running(pid) and loop.time() < deadline:
            await asyncio.sleep(0.05)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    alias = default_socket_path(codex_home)
    for path in (runtime_socket_path(alias), alias):
        path.unlink(missing_ok=True)
