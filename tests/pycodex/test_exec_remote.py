"""`pycodex exec --remote ADDR` (Codex 0.171): the turn runs on an app-server that is already running (its config,
its model, its store), over `unix://PATH` and `ws://`; bad addresses and unreachable servers fail as Codex words it."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from pycodex.transport.unix_paths import socket_answers
from tests.support.appserver_process import ServerProcess, app_server_env, default_argv, free_port
from tests.support.fake_model import message, model_config
from tests.support.unix_attach import run_cli


async def _exec(client_home: Path, cwd: Path, *args: str) -> tuple[int, str, str]:
    env = app_server_env(client_home)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "pycodex", "exec", "--skip-git-repo-check", *args, env=env, cwd=str(cwd),
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_exec_runs_its_turn_on_a_remote_server(fake_model, tmp_path: Path, workspace: Path) -> None:
    model = await fake_model({"responses": [{"output": [message("hello from the server")]}], "when_exhausted": "repeat_last"})
    server_home = tmp_path / "server_home"
    model_config(server_home, model.url)
    client_home = tmp_path / "client_home"  # no model configured here: the server's config is the one used
    client_home.mkdir()
    alias = tmp_path / "app.sock"
    port = free_port()
    server = await ServerProcess.spawn(default_argv("--listen", f"unix://{alias}"), env=app_server_env(server_home),
                                       cwd=workspace, protocol_stdio=False)
    ws_server = await ServerProcess.spawn(default_argv("--listen", f"ws://127.0.0.1:{port}"),
                                          env=app_server_env(server_home), cwd=workspace, protocol_stdio=False)
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        while not socket_answers(alias) or "listening on ws://" not in ws_server.stderr_text:
            assert server.returncode is None and ws_server.returncode is None and loop.time() < deadline
            await asyncio.sleep(0.05)
        code, out, err = await _exec(client_home, workspace, "--json", "--remote", f"unix://{alias}", "say hello")
        assert code == 0, err
        events = [json.loads(line) for line in out.splitlines()]
        assert events[0]["type"] == "thread.started"
        texts = [e["item"]["text"] for e in events if e["type"] == "item.completed" and e["item"]["type"] == "agent_message"]
        assert texts == ["hello from the server"]
        assert len(model.requests()) == 1
        assert list(server_home.glob("sessions/**/rollout-*.jsonl"))  # recorded by the server, not by the client
        assert not list(client_home.glob("sessions/**/rollout-*.jsonl"))
        code, out, err = await _exec(client_home, workspace, "--remote", f"ws://127.0.0.1:{port}", "again")
        assert code == 0, err
        assert out == "hello from the server\n"  # the fake model repeats its last answer
    finally:
        await server.stop(2.0, eof_first=False)
        await ws_server.stop(2.0, eof_first=False)


async def test_bad_addresses_and_unreachable_servers(tmp_path: Path) -> None:
    env = app_server_env(tmp_path / "home")
    code, out, err = await run_cli(env, "exec", "--skip-git-repo-check", "--remote", "tcp://x", "hi")
    assert (code, out) == (1, "")
    assert err.strip() == ("Error: invalid remote address `tcp://x`; expected `ws://host:port`, `wss://host:port`, "
                           "`unix://`, or `unix://PATH`")
    missing = tmp_path / "none.sock"
    code, out, err = await run_cli(env, "exec", "--skip-git-repo-check", "--remote", f"unix://{missing}", "hi")
    assert code == 1 and err.strip().endswith(
        f"Error: failed to connect to remote app server at `unix://{missing}`: No such file or directory (os error 2)")
    port = free_port()
    code, out, err = await run_cli(env, "exec", "--skip-git-repo-check", "--remote", f"ws://127.0.0.1:{port}", "hi")
    assert code == 1 and err.strip().endswith(
        f"Error: failed to connect to remote app server at `ws://127.0.0.1:{port}/`: IO error: Connection refused "
        "(os error 111)")
