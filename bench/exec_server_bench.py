"""Exec-server benchmarks: per-command round trip (50 sequential `true`) and 50 MB stdout throughput.

The same client (ours, ``exec_client``) drives both exec-servers over a loopback WebSocket.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
from pathlib import Path

from bench.harness import Impl, implementations, median, print_table, temp_dirs
from exec_client.client import ExecServerClient
from exec_client.environment import ExecServerEnvironment, OutputChunk, ProcessSpec

COMMANDS = 50
THROUGHPUT_BYTES = 50_000_000
THROUGHPUT_RUNS = 3


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _start(impl: Impl, home: Path) -> tuple[asyncio.subprocess.Process, str]:
    port = _port()
    url = f"ws://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "OPENAI_"))}
    env.update(CODEX_HOME=str(home), RUST_LOG="error", PYCODEX_LOG="error")
    home.mkdir(parents=True, exist_ok=True)
    proc = await asyncio.create_subprocess_exec(
        *impl.argv, "exec-server", "--listen", url, env=env, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL)
    for _ in range(400):
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return proc, url
        except OSError:
            await asyncio.sleep(0.025)
    proc.kill()
    raise RuntimeError(f"{impl.name} exec-server did not listen")


async def _run_one(env: ExecServerEnvironment, argv: list[str], cwd: Path) -> int:
    process = await env.start(ProcessSpec(argv=argv, cwd=cwd))
    total = 0
    while True:
        event = await process.next_event(60)
        if isinstance(event, OutputChunk):
            total += len(event.data)
        elif event is None and process.is_closed:
            return total


async def _raw_throughput(url: str, cwd: Path) -> float:
    """MB/s of one 50 MB stdout stream, read by a lean websocket client (json + base64 only), so the
    measurement is the server's and not our typed client's."""
    import binascii
    import json

    from websockets.asyncio.client import connect

    async with connect(url, max_size=1 << 24, compression=None, max_queue=256) as ws:
        await ws.send(json.dumps({"id": 1, "method": "initialize", "params": {"clientName": "bench"}}))
        await ws.recv()
        await ws.send(json.dumps({"method": "initialized", "params": {}}))
        t0 = time.perf_counter()
        await ws.send(json.dumps({"id": 2, "method": "process/start", "params": {
            "processId": "tp", "argv": ["head", "-c", str(THROUGHPUT_BYTES), "/dev/zero"],
            "cwd": cwd.as_uri(), "env": {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, "tty": False,
            "arg0": None}}))
        total = 0
        async for frame in ws:
            msg = json.loads(frame)
            method = msg.get("method")
            if method == "process/output":
                total += len(binascii.a2b_base64(msg["params"]["chunk"]))
            elif method == "process/closed":
                break
        elapsed = time.perf_counter() - t0
    if total != THROUGHPUT_BYTES:
        raise RuntimeError(f"got {total} bytes, expected {THROUGHPUT_BYTES}")
    return total / elapsed / 1e6


async def measure(impl: Impl) -> tuple[float, float]:
    tmp, home, work = temp_dirs()
    with tmp:
        proc, url = await _start(impl, home)
        try:
            client = await ExecServerClient.connect_websocket(url)
            await client.initialize("bench")
            env = ExecServerEnvironment(client)
            await _run_one(env, ["true"], work)  # warm up
            samples = []
            for _ in range(COMMANDS):
                t0 = time.perf_counter()
                await _run_one(env, ["true"], work)
                samples.append(time.perf_counter() - t0)
            await env.close()
            rates = [await _raw_throughput(url, work) for _ in range(THROUGHPUT_RUNS)]
            return median(samples), median(rates)
        finally:
            proc.terminate()
            await proc.wait()


async def run() -> None:
    latency: dict[str, float] = {}
    throughput: dict[str, float] = {}
    for impl in implementations():
        latency[impl.name], throughput[impl.name] = await measure(impl)
    print_table("exec-server (WebSocket)", [
        ("command round trip (true)", "s", latency, "lower", 1.0),
        ("stdout throughput (50 MB)", "MB/s", throughput, "higher", 1.0),
    ])
