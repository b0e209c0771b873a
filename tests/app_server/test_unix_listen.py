"""`pycodex app-server --listen unix://` and `unix://PATH`: Codex's layout, owner-only sockets, a session with an
approval over WebSocket on the socket, stale sockets replaced, a live one kept, other users refused."""

from __future__ import annotations

import asyncio
import os
import socket
import stat
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import unix_connect
from websockets.exceptions import InvalidStatus

from pycodex.transport.unix_paths import (
    connect_address,
    default_socket_path,
    peer_allowed,
    peer_uid,
    runtime_dir,
    runtime_socket_path,
    socket_answers,
)
from tests.support import SchemaPair, WsAppServerClient
from tests.support.appserver_process import ServerProcess, app_server_env, default_argv
from tests.support.fake_model import model_config
from tests.support.unix_attach import APPROVAL_SCRIPT, turn_with_an_approval


async def _listen(codex_home: Path, cwd: Path, url: str, alias: Path) -> ServerProcess:
    process = await ServerProcess.spawn(default_argv("--listen", url), env=app_server_env(codex_home), cwd=cwd,
                                        protocol_stdio=False)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while not socket_answers(alias):
        if process.returncode is not None or loop.time() > deadline:
            await process.stop(2.0, eof_first=False)
            raise AssertionError(f"no listener at {alias}: {process.stderr_text[-2000:]}")
        await asyncio.sleep(0.05)
    return process


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


async def test_default_socket_session_with_an_approval(
    fake_model, codex_home: Path, workspace: Path, codex_schemas: SchemaPair
) -> None:
    model = await fake_model(APPROVAL_SCRIPT)
    model_config(codex_home, model.url, approval_policy="on-request")
    alias = default_socket_path(codex_home)
    process = await _listen(codex_home, workspace, "unix://", alias)
    try:
        real = runtime_socket_path(alias)
        assert alias.is_symlink() and Path(os.readlink(alias)) == real
        assert _mode(alias.parent) == 0o700 and _mode(runtime_dir()) == 0o700
        assert stat.S_ISSOCK(real.lstat().st_mode) and _mode(real) == 0o600
        ws = await unix_connect(connect_address(alias), uri="ws://localhost/", max_size=None, ping_interval=None)
        assert ws.response is not None
        assert ws.response.headers["x-codex-websocket-max-unfragmented-message-bytes"] == "16777216"  # as Codex's
        client = WsAppServerClient(ws, codex_schemas, label="unix", owned=process)
        final = await turn_with_an_approval(client, workspace)
        assert final["status"] == "completed"
        assert (workspace / "out.txt").read_text() == "hi"
        assert await client.close() == 0
        assert not alias.exists() and not alias.is_symlink() and not real.exists()  # removed on the way out
    finally:
        await process.stop(2.0, eof_first=False)


async def test_stale_socket_is_replaced_and_a_live_one_kept(codex_home: Path, workspace: Path, tmp_path: Path) -> None:
    alias = tmp_path / "app.sock"
    real = runtime_socket_path(alias)
    runtime_dir().mkdir(mode=0o700, exist_ok=True)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(real))  # what a crash leaves: a socket file nobody listens on, and the link to it
    dead.close()
    alias.symlink_to(real)
    assert not socket_answers(alias)
    first = await _listen(codex_home, workspace, f"unix://{alias}", alias)
    try:
        second = await ServerProcess.spawn(default_argv("--listen", f"unix://{alias}"), env=app_server_env(codex_home),
                                           cwd=workspace, protocol_stdio=False)
        assert await second.wait_exit(30) == 1
        assert "another app-server is listening on" in second.stderr_text
        assert socket_answers(alias)  # the running server still has its socket
    finally:
        await first.stop(2.0, eof_first=False)
    assert not real.exists()


async def test_a_path_that_is_not_a_socket_is_left_alone(codex_home: Path, workspace: Path, tmp_path: Path) -> None:
    alias = tmp_path / "notes.txt"
    alias.write_text("keep me")
    process = await ServerProcess.spawn(default_argv("--listen", f"unix://{alias}"), env=app_server_env(codex_home),
                                        cwd=workspace, protocol_stdio=False)
    assert await process.wait_exit(30) == 1
    assert "is not a socket" in process.stderr_text and alias.read_text() == "keep me"


def test_only_the_owner_is_let_in() -> None:
    """The SO_PEERCRED check: our own uid passes, any other (root's included) is refused."""
    me = os.getuid()
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with left, right:
        assert peer_uid(left) == me
    assert peer_allowed(me)
    assert not peer_allowed(me + 1)
    assert not peer_allowed(0, own_uid=1000) and not peer_allowed(1000, own_uid=0)


async def test_listen_off_serves_nothing_until_sigterm(codex_home: Path, workspace: Path) -> None:
    process = await ServerProcess.spawn(default_argv("--listen", "off"), env=app_server_env(codex_home), cwd=workspace,
                                        protocol_stdio=False)
    try:
        assert process.proc.stdin is not None
        process.proc.stdin.write(b'{"id":1,"method":"initialize","params":{"clientInfo":{"name":"t","version":"1"}}}\n')
        process.proc.stdin.close()  # not a stdio server: the line is not read, EOF does not end it
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        while "no listener (--listen off)" not in process.stderr_text:  # its SIGTERM handler is set by then
            assert process.returncode is None and loop.time() < deadline, process.stderr_text
            await asyncio.sleep(0.05)
        process.proc.terminate()
        assert await process.wait_exit(30) == 0, process.stderr_text
        assert process.stdout == b""
    finally:
        await process.stop(2.0, eof_first=False)


async def test_the_listener_refuses_a_client_the_peer_check_refuses(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The check is wired into the upgrade: a client it refuses gets 403 and never a session."""
    from pycodex.transport import unix

    seen: list[int] = []

    def refuse(uid: int) -> bool:
        seen.append(uid)
        return False

    monkeypatch.setattr(unix, "peer_allowed", refuse)
    alias = tmp_path / "gate.sock"
    stop = asyncio.Event()
    listening = asyncio.Event()

    def handler(outbox: object) -> Any:
        raise AssertionError("a refused client got a session")

    server = asyncio.create_task(unix.serve_unix_websocket(handler, alias, stop=stop, on_listening=lambda _: listening.set()))
    try:
        await asyncio.wait_for(listening.wait(), 10)
        with pytest.raises(InvalidStatus) as refused:
            await asyncio.wait_for(unix_connect(connect_address(alias), uri="ws://localhost/"), 10)
        assert refused.value.response.status_code == 403
        assert seen == [os.getuid()]
    finally:
        stop.set()
        await asyncio.wait_for(server, 10)
    assert not alias.is_symlink()
