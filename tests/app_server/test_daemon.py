"""`pycodex app-server daemon` and `proxy`: start/status/stop with Codex's JSON reports and layout, a second start
finding the running daemon, a crashed daemon replaced, and a session with an approval through the proxy (which
starts the daemon when none runs). Every daemon is SIGKILLed by its recorded pid at teardown."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import stat
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from pycodex.transport.unix_paths import default_socket_path, socket_answers
from tests.support import SchemaPair, WsAppServerClient
from tests.support.appserver_process import ServerProcess, app_server_env, default_argv
from tests.support.fake_model import model_config
from tests.support.unix_attach import APPROVAL_SCRIPT, daemon_pid, end_daemon, run_cli, turn_with_an_approval


@pytest.fixture
async def daemon_env(codex_home: Path) -> AsyncIterator[dict[str, str]]:
    """The environment of daemon commands on ``codex_home``; the daemon they left running is killed."""
    yield app_server_env(codex_home)
    await end_daemon(codex_home)


async def _daemon(env: dict[str, str], command: str) -> dict[str, object]:
    code, out, err = await run_cli(env, "app-server", "daemon", command)
    assert code == 0, err
    report: dict[str, object] = json.loads(out)
    return report


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def test_start_status_second_start_and_stop(daemon_env: dict[str, str], codex_home: Path) -> None:
    socket_path = str(default_socket_path(codex_home))
    assert await _daemon(daemon_env, "status") == {
        "status": "notRunning", "backend": "pid", "socketPath": socket_path, "cliVersion": "0.169.0"}
    started = await _daemon(daemon_env, "start")
    pid = started.pop("pid")
    assert isinstance(pid, int) and _alive(pid)
    assert started == {"status": "started", "backend": "pid", "socketPath": socket_path, "cliVersion": "0.169.0",
                       "appServerVersion": "0.169.0"}
    assert socket_answers(Path(socket_path))  # start returns once the daemon accepts connections
    folder = codex_home / "app-server-daemon"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "daemon.stderr.log").stat().st_mode) == 0o600
    assert json.loads((folder / "daemon.pid").read_text())["pid"] == pid
    again = await _daemon(daemon_env, "start")
    assert again["status"] == "alreadyRunning" and "pid" not in again
    assert daemon_pid(codex_home) == pid  # the second start found the first daemon, started none
    running = await _daemon(daemon_env, "status")
    assert running["status"] == "running" and running["pid"] == pid
    assert (await _daemon(daemon_env, "version"))["status"] == "running"
    assert (await _daemon(daemon_env, "stop"))["status"] == "stopped"
    assert not _alive(pid) and not (folder / "daemon.pid").exists()
    assert not socket_answers(Path(socket_path))
    assert (await _daemon(daemon_env, "stop"))["status"] == "notRunning"


async def test_a_crashed_daemon_is_replaced(daemon_env: dict[str, str], codex_home: Path) -> None:
    first = (await _daemon(daemon_env, "start"))["pid"]
    assert isinstance(first, int)
    os.kill(first, signal.SIGKILL)  # a crash: the pid record, the socket file and its link stay behind
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 10
    while _alive(first):
        assert loop.time() < deadline
        await asyncio.sleep(0.05)
    alias = default_socket_path(codex_home)
    assert alias.is_symlink() and not socket_answers(alias)
    assert (await _daemon(daemon_env, "status"))["status"] == "notRunning"
    second = await _daemon(daemon_env, "start")
    assert second["status"] == "started" and second["pid"] != first
    assert socket_answers(alias)
    assert (await _daemon(daemon_env, "stop"))["status"] == "stopped"


async def test_usage_errors(daemon_env: dict[str, str]) -> None:
    code, out, err = await run_cli(daemon_env, "app-server", "daemon", "frobnicate")
    assert (code, out) == (2, "") and "usage: pycodex app-server daemon" in err
    code, out, err = await run_cli(daemon_env, "app-server", "proxy", "--sock", "/nonexistent/app.sock")
    assert (code, out) == (1, "") and err.startswith("Error: failed to connect to /nonexistent/app.sock")


async def test_proxy_starts_the_daemon_and_carries_a_turn_with_an_approval(
    fake_model, daemon_env: dict[str, str], codex_home: Path, workspace: Path, codex_schemas: SchemaPair
) -> None:
    model = await fake_model(APPROVAL_SCRIPT)
    model_config(codex_home, model.url, approval_policy="on-request")
    ours, theirs = socket.socketpair()
    proxy = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "pycodex", "app-server", "proxy", stdin=theirs, stdout=theirs,
        stderr=asyncio.subprocess.PIPE, env=daemon_env, cwd=str(workspace),
    )
    theirs.close()
    try:
        ws = await asyncio.wait_for(connect("ws://localhost/", sock=ours, max_size=None, ping_interval=None), 60)
        client = WsAppServerClient(ws, codex_schemas, label="proxy", owned=None)
        final = await turn_with_an_approval(client, workspace)
        assert final["status"] == "completed"
        assert (workspace / "out.txt").read_text() == "hi"
        await client.close()
        assert await asyncio.wait_for(proxy.wait(), 10) == 0  # the socket's end ends the proxy
        pid = daemon_pid(codex_home)
        assert pid is not None and _alive(pid)  # the daemon outlives its clients
    finally:
        if proxy.returncode is None:
            proxy.kill()
            await proxy.wait()


async def test_codex_only_commands_say_why(daemon_env: dict[str, str]) -> None:
    code, out, err = await run_cli(daemon_env, "app-server", "daemon", "bootstrap")
    assert (code, out) == (1, "") and err.startswith("Error: `daemon bootstrap` installs Codex's standalone managed")
    code, _, err = await run_cli(daemon_env, "app-server", "daemon", "enable-remote-control")
    assert code == 1 and "remote-control service" in err


async def test_start_refuses_a_socket_held_by_an_unmanaged_server(
    daemon_env: dict[str, str], codex_home: Path, workspace: Path
) -> None:
    server = await ServerProcess.spawn(default_argv("--listen", "unix://"), env=daemon_env, cwd=workspace,
                                       protocol_stdio=False)
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        while not socket_answers(default_socket_path(codex_home)):
            assert server.returncode is None and loop.time() < deadline, server.stderr_text
            await asyncio.sleep(0.05)
        code, out, err = await run_cli(daemon_env, "app-server", "daemon", "start")
        assert (code, out) == (1, "") and "that the daemon does not manage is listening on" in err
        assert daemon_pid(codex_home) is None and server.returncode is None
    finally:
        await server.stop(2.0, eof_first=False)
