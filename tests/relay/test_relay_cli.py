"""``pycodex relay`` and ``exec-server --remote`` as real subprocesses (``python -m relay``,
``python -m exec_server.remote``): URLs on stdout, clear usage errors, and a whole remote round trip."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from exec_client.remote import NoiseRemoteConfig, RemoteEnvironmentConnector
from tests.support.remote import ENV_ID, STEP, TOKEN, fast_backoff

ROOT = Path(__file__).resolve().parents[2]


def env_with(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "PYCODEX_RELAY"))}
    return env | {"PYTHONPATH": str(ROOT)} | extra


@asynccontextmanager
async def spawn(*args: str, env: dict[str, str], stdin: bytes | None = None) -> AsyncIterator[Any]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, *args, env=env, cwd=ROOT,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdin is not None
    if stdin is not None:
        proc.stdin.write(stdin)
        await proc.stdin.drain()
    try:
        yield proc
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except TimeoutError:
                proc.kill()
                await asyncio.wait_for(proc.wait(), 10)


async def finish(*args: str, env: dict[str, str], stdin: bytes = b"") -> tuple[int, str]:
    async with spawn(*args, env=env, stdin=stdin) as proc:
        proc.stdin.close()
        _, err = await asyncio.wait_for(proc.communicate(), STEP)
        return proc.returncode, err.decode()


async def test_relay_help_says_it_is_a_development_tool() -> None:
    code, _ = await finish("-m", "relay", "--help", env=env_with())
    assert code == 0
    async with spawn("-m", "relay", "--help", env=env_with()) as proc:
        out, _ = await asyncio.wait_for(proc.communicate(), STEP)
    text = " ".join(out.decode().split())
    assert "development tool, not a production control plane" in text


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        ((), {}, "no bearer token configured"),
        (("--listen", "0.0.0.0:0"), {"PYCODEX_RELAY_TOKEN": TOKEN}, "loopback"),
        (("--listen", "localhost"), {"PYCODEX_RELAY_TOKEN": TOKEN}, "127.0.0.1:PORT"),
    ],
)
async def test_relay_refuses_bad_options_with_exit_2(
    args: tuple[str, ...], env: dict[str, str], message: str
) -> None:
    code, err = await finish("-m", "relay", *args, env=env_with(**env))
    assert code == 2
    assert message in err


async def test_executor_without_a_bearer_or_environment_id_exits_with_a_clear_error() -> None:
    code, err = await finish(
        "-m", "exec_server.remote", "--remote", "http://127.0.0.1:9", "--environment-id", "e", env=env_with()
    )
    assert code == 2 and "CODEX_API_KEY" in err
    code, err = await finish(
        "-m", "exec_server.remote", "--remote", "http://127.0.0.1:9", env=env_with(CODEX_API_KEY=TOKEN)
    )
    assert code == 2 and "--environment-id" in err


async def test_executor_exits_1_when_registration_fails() -> None:
    # Port 9 on loopback is closed: the first registration fails and, as in Codex, is not retried.
    args = ("-m", "exec_server.remote", "--remote", "http://127.0.0.1:9", "--environment-id", ENV_ID)
    code, err = await finish(*args, env=env_with(CODEX_API_KEY=TOKEN))
    assert code == 1
    assert "environment registry request" in err and TOKEN not in err


async def test_relay_and_executor_processes_serve_our_harness(tmp_path: Path) -> None:
    async with spawn("-m", "relay", env=env_with(PYCODEX_RELAY_TOKEN=TOKEN)) as relay:
        registry_url = (await asyncio.wait_for(relay.stdout.readline(), STEP)).decode().strip()
        rendezvous_url = (await asyncio.wait_for(relay.stdout.readline(), STEP)).decode().strip()
        assert registry_url.startswith("http://127.0.0.1:") and rendezvous_url.startswith("ws://127.0.0.1:")
        executor_args = (
            "-m", "exec_server.remote", "--remote", registry_url, "--environment-id", ENV_ID,
            "--name", "test box", "--registration-bearer-stdin",
        )  # fmt: skip
        async with spawn(*executor_args, env=env_with(), stdin=f"{TOKEN}\n".encode()) as executor:
            line = await asyncio.wait_for(executor.stderr.readline(), STEP)
            assert f"registered remote environment {ENV_ID} (test box)" in line.decode()
            connector = RemoteEnvironmentConnector(
                NoiseRemoteConfig(registry_url, ENV_ID, TOKEN), backoff=fast_backoff(), handshake_timeout=STEP
            )
            try:
                client = await asyncio.wait_for(connector.open_client(attempts=20), STEP)
                target = tmp_path / "x.txt"
                target.write_bytes(b"through two processes")
                assert await asyncio.wait_for(client.read_file(target), STEP) == b"through two processes"
                await client.close()
            finally:
                await connector.aclose()
            executor.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(executor.wait(), STEP) == 0
        relay.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(relay.wait(), STEP) == 0
