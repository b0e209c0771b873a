"""``python -m bench.proxy_bench``: spawning ``pycodex app-server proxy`` -> ``initialize`` answered, with a daemon running.

The goal is absolute: at most 0.1 s (median over the runs). The client speaks WebSocket through the proxy's
stdio (a socketpair is both its stdin and stdout), as a client of Codex's proxy does; its own imports are
paid before the clock starts. The daemon runs in a temporary ``CODEX_HOME`` and is stopped at the end.

The proxy is spawned as clients spawn it: the installed ``pycodex`` command next to this interpreter (its
console script), not ``python -m pycodex``, which would add runpy; ``-m`` only where no script is installed.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from websockets.asyncio.client import connect

RUNS = int(os.environ.get("PYCODEX_BENCH_RUNS", "20"))
GOAL_S = 0.1
_INIT = json.dumps({"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "bench", "version": "1"}}})


def proxy_argv() -> list[str]:
    """``pycodex app-server proxy`` as a client runs it: the installed command, else ``python -m pycodex``."""
    script = Path(sys.executable).with_name("pycodex")
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "pycodex"]
    return [*command, "app-server", "proxy"]


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pycodex", *args], env=env, capture_output=True, text=True,
                          timeout=60, check=True)


async def _one(env: dict[str, str], cwd: str | None = None) -> float:
    """Spawn a proxy -> ``initialize`` answered (or, given ``cwd``, -> a ``thread/start`` there answered)."""
    ours, theirs = socket.socketpair()
    start = time.perf_counter()
    proxy = subprocess.Popen(proxy_argv(), stdin=theirs.fileno(), stdout=theirs.fileno(), env=env)
    theirs.close()
    try:
        async with connect("ws://localhost/", sock=ours, ping_interval=None, open_timeout=10) as ws:
            await ws.send(_INIT)
            answer = json.loads(await asyncio.wait_for(ws.recv(), 10))
            if cwd is not None and "result" in answer:
                await ws.send(json.dumps({"method": "initialized"}))
                await ws.send(json.dumps({"id": 2, "method": "thread/start", "params": {"cwd": cwd}}))
                while "method" in (answer := json.loads(await asyncio.wait_for(ws.recv(), 30))):
                    pass  # notifications (thread/started, ...) before the answer
            elapsed = time.perf_counter() - start
        assert "result" in answer, answer
    finally:
        try:
            proxy.wait(10)
        except subprocess.TimeoutExpired:
            proxy.kill()
            proxy.wait()
    return elapsed


class WarmDaemon:
    """A pycodex daemon in a temporary ``CODEX_HOME`` that has served one thread already (its thread modules
    are imported): ``thread_start_s`` then times what a client of a running daemon waits for, spawning the
    proxy included."""

    def __init__(self, home: Path, env: dict[str, str]) -> None:
        self.env = {**env, "CODEX_HOME": str(home), "PYCODEX_LOG": "error"}
        self.env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(Path(__file__).resolve().parents[1]), env.get("PYTHONPATH")) if p)
        self.home = home
        self.work = home.parent / "proxy-work"

    async def __aenter__(self) -> WarmDaemon:
        self.home.mkdir(parents=True, exist_ok=True)
        self.work.mkdir(parents=True, exist_ok=True)
        _cli(self.env, "app-server", "daemon", "start")
        await _one(self.env, str(self.work))  # warm-up: not a sample
        return self

    async def __aexit__(self, *_exc: object) -> None:
        _cli(self.env, "app-server", "daemon", "stop")

    async def thread_start_s(self) -> float:
        """Spawn ``proxy`` -> initialize -> the first thread/start of this connection answered, seconds."""
        return await _one(self.env, str(self.work))


def _bare_interpreter(env: dict[str, str]) -> float:
    """Spawn -> exit of ``python -c pass``: the floor under any Python proxy on this machine right now."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], env=env, check=True, timeout=30)
    return time.perf_counter() - start


async def run() -> float:
    """Print the row; returns the median seconds."""
    with tempfile.TemporaryDirectory(prefix="pycodex-proxy-bench-") as home:
        env = {**os.environ, "CODEX_HOME": home, "PYCODEX_LOG": "error"}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(Path(__file__).resolve().parents[1]), env.get("PYTHONPATH")) if p)
        _cli(env, "app-server", "daemon", "start")
        try:
            samples = [await _one(env) for _ in range(RUNS)]
            floor = statistics.median(_bare_interpreter(env) for _ in range(RUNS))
        finally:
            _cli(env, "app-server", "daemon", "stop")
    median = statistics.median(samples)
    verdict = "ok" if median <= GOAL_S else "OVER GOAL"
    print(f"proxy spawn -> initialize answered: median {median * 1000:.1f} ms, min {min(samples) * 1000:.1f} ms, "
          f"max {max(samples) * 1000:.1f} ms over {RUNS} runs (goal <= {GOAL_S * 1000:.0f} ms: {verdict}); "
          f"`python -c pass` alone: median {floor * 1000:.1f} ms")
    return median


if __name__ == "__main__":
    asyncio.run(run())
