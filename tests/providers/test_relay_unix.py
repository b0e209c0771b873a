"""The relay's unix socket (``--listen-unix``): a real ``pycodex exec-server --remote unix://PATH`` registers and
serves through it, while the harness reaches the same relay over loopback TCP, Noise end to end."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from exec_client.environment import ExecServerEnvironment
from relay.server import start_relay
from tests.support.procs import spawn, stop_process
from tests.support.remote import ROOT, STEP, TOKEN, harness_connector

ENV_ID = "env-unix-socket"


async def test_an_executor_registers_and_serves_through_the_relays_unix_socket(tmp_path: Path) -> None:
    socket_path = tmp_path / "relay.sock"
    relay = await start_relay([TOKEN], unix_path=socket_path)
    proc = None
    try:
        assert socket_path.is_socket()
        env = dict(os.environ, CODEX_API_KEY=TOKEN, PYTHONPATH=str(ROOT))
        proc = await spawn(sys.executable, "-m", "pycodex", "exec-server", "--remote", f"unix://{socket_path}",
                           "--environment-id", ENV_ID, env=env, stdin=asyncio.subprocess.DEVNULL,
                           stderr=asyncio.subprocess.PIPE)  # fmt: skip
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STEP
        while not relay.rendezvous.executor_connected(ENV_ID):
            assert proc.returncode is None and loop.time() < deadline, "the executor did not register"
            await asyncio.sleep(0.05)
        async with harness_connector(relay, ENV_ID) as connector:
            client = await asyncio.wait_for(connector.open_client("unix-test"), STEP)
            environment = ExecServerEnvironment(client)
            try:
                await environment.write_file(tmp_path / "seen", b"through the unix socket")
                assert (tmp_path / "seen").read_bytes() == b"through the unix socket"
            finally:
                await environment.close()
    finally:
        if proc is not None:
            await stop_process(proc)
        await relay.close()
    assert not socket_path.exists()  # the relay removes its socket file


async def test_a_bad_unix_url_is_refused_before_anything_runs(tmp_path: Path) -> None:
    env = dict(os.environ, CODEX_API_KEY=TOKEN, PYTHONPATH=str(ROOT))
    proc = await spawn(sys.executable, "-m", "pycodex", "exec-server", "--remote", "unix://relative/relay.sock",
                       "--environment-id", ENV_ID, env=env, stdin=asyncio.subprocess.DEVNULL,
                       stderr=asyncio.subprocess.PIPE)  # fmt: skip
    try:
        assert proc.stderr is not None
        err = await asyncio.wait_for(proc.stderr.read(), STEP)
        assert await asyncio.wait_for(proc.wait(), STEP) == 2
    finally:
        await stop_process(proc)
    assert "--remote must be an http(s) URL or unix:///PATH, got 'unix://relative/relay.sock'" in err.decode()
