"""The processes both relay benchmarks start: ``pycodex relay`` (registry and rendezvous) and an
implementation's ``exec-server --remote`` registered with it (``bench.relay_bench`` and
``bench.relay_client_bench``)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from bench.harness import Impl
from tests.support.procs import stop_process

__all__ = ["TOKEN", "WAIT", "start_executor", "start_relay"]

#: The relay's token, which the executors present too.
TOKEN = "bench-relay-token"
#: How long a start-up step may take on the shared bench host.
WAIT = 60.0


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "OPENAI_"))}
    return env | {"CODEX_HOME": str(home), "RUST_LOG": "error", "PYCODEX_LOG": "error"} | extra


async def start_relay(home: Path) -> tuple[asyncio.subprocess.Process, str]:
    """Start ``pycodex relay`` with ``home`` as its CODEX_HOME: (the process, the registry URL it prints)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "pycodex", "relay", env=_env(home, PYCODEX_RELAY_TOKEN=TOKEN),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)  # fmt: skip
    assert proc.stdout is not None
    try:
        url = (await asyncio.wait_for(proc.stdout.readline(), WAIT)).decode().strip()
    except TimeoutError:
        await stop_process(proc)
        raise
    if not url.startswith("http://"):
        await stop_process(proc)
        raise RuntimeError(f"pycodex relay did not print its registry URL (got {url!r})")
    return proc, url


async def start_executor(
    impl: Impl, home: Path, registry_url: str, environment_id: str
) -> asyncio.subprocess.Process:
    """Start ``impl``'s ``exec-server --remote`` registered with the relay at ``registry_url``."""
    return await asyncio.create_subprocess_exec(
        *impl.argv, "exec-server", "--remote", registry_url, "--environment-id", environment_id,
        env=_env(home, CODEX_API_KEY=TOKEN), cwd=home, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)  # fmt: skip


