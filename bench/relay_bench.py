"""Relay benchmarks: command round trip (sequential ``true``) and 50 MB stdout through the Noise relay.

Topology: one ``pycodex relay`` (current checkout, a subprocess) as registry and rendezvous, each
implementation's ``exec-server --remote`` registered with it under its own environment id, and the
same harness client for both (ours: ``exec_client.remote`` over Noise, then ``exec_client``). Only the
executor differs between the columns, so the ratio is the executor's share of the cost. Rounds
alternate between the executors so that background load affects both alike. The last row,
``bench.relay_client_bench``, turns it round: one executor (Codex's) and the two app-servers as clients.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.harness import Impl, cpu_seconds, implementations, median, print_table, spread, temp_dirs
from bench.relay_processes import TOKEN, WAIT, start_executor, start_relay
from exec_client.environment import ExecServerEnvironment, OutputChunk, ProcessSpec
from exec_client.remote import NoiseRemoteConfig, RemoteEnvironmentConnector
from tests.support.procs import stop_process

COMMANDS = 50
THROUGHPUT_BYTES = 50_000_000
THROUGHPUT_RUNS = int(os.environ.get("BENCH_RUNS", "5"))  # one run through two websocket hops is noisy
STREAMS = 8  # concurrent processes on one harness connection, 50 MB between them
LATENCY_ROUNDS = 5
ENVIRONMENT_ID = "bench-relay"


async def _run_one(env: ExecServerEnvironment, argv: list[str], cwd: Path) -> int:
    process = await env.start(ProcessSpec(argv=argv, cwd=cwd))
    total = 0
    for _ in range(10_000_000):  # bounded: one event per iteration
        event = await process.next_event(WAIT)
        if isinstance(event, OutputChunk):
            total += len(event.data)
        elif event is None and process.is_closed:
            return total
    raise RuntimeError("process never closed")


async def _open(
    connector: RemoteEnvironmentConnector, executor: asyncio.subprocess.Process
) -> ExecServerEnvironment:
    """The executor registers asynchronously: retry until its rendezvous link is up."""
    for _ in range(int(WAIT / 0.1)):
        if executor.returncode is not None:
            raise RuntimeError(f"executor exited with {executor.returncode}")
        try:
            client = await asyncio.wait_for(connector.open_client("bench", attempts=1), WAIT)
        except (ConnectionError, OSError, Exception):  # not registered / not connected yet
            await asyncio.sleep(0.1)
            continue
        return ExecServerEnvironment(client)
    raise RuntimeError("could not reach the executor through the relay")


@dataclass
class _Side:
    """One executor implementation registered with the shared relay, and its measurements."""

    impl: Impl
    proc: asyncio.subprocess.Process
    connector: RemoteEnvironmentConnector
    env: ExecServerEnvironment | None = None
    latency: list[float] = field(default_factory=list)
    rates: list[float] = field(default_factory=list)
    cpu: dict[str, float] = field(default_factory=dict)
    multi_rates: list[float] = field(default_factory=list)
    #: Executor CPU seconds per 100 MB, one sample per multi-stream run.
    multi_cpu: list[float] = field(default_factory=list)


async def _latency_round(side: _Side, work: Path, count: int) -> None:
    assert side.env is not None
    for _ in range(count):
        t0 = time.perf_counter()
        await _run_one(side.env, ["true"], work)
        side.latency.append(time.perf_counter() - t0)


async def _throughput_round(side: _Side, work: Path, relay_pid: int) -> None:
    assert side.env is not None
    pids = {"harness": os.getpid(), "relay": relay_pid, "executor": side.proc.pid}
    before = {name: cpu_seconds(pid) for name, pid in pids.items()}
    t0 = time.perf_counter()
    got = await _run_one(side.env, ["head", "-c", str(THROUGHPUT_BYTES), "/dev/zero"], work)
    elapsed = time.perf_counter() - t0
    if got != THROUGHPUT_BYTES:
        raise RuntimeError(f"{side.impl.name}: got {got} bytes, expected {THROUGHPUT_BYTES}")
    side.rates.append(got / elapsed / 1e6)
    for name, pid in pids.items():
        side.cpu[name] = side.cpu.get(name, 0.0) + cpu_seconds(pid) - before[name]


async def _multi_stream_round(side: _Side, work: Path) -> None:
    """``STREAMS`` processes at once on the one connection: the executor's mux and output pumps."""
    assert side.env is not None
    env, each = side.env, THROUGHPUT_BYTES // STREAMS
    argv = ["head", "-c", str(each), "/dev/zero"]
    cpu0, t0 = cpu_seconds(side.proc.pid), time.perf_counter()
    got = await asyncio.gather(*(_run_one(env, argv, work) for _ in range(STREAMS)))
    elapsed, cpu = time.perf_counter() - t0, cpu_seconds(side.proc.pid) - cpu0
    if sum(got) != each * STREAMS:
        raise RuntimeError(f"{side.impl.name}: got {sum(got)} bytes, expected {each * STREAMS}")
    side.multi_rates.append(sum(got) / elapsed / 1e6)
    side.multi_cpu.append(cpu / (sum(got) / 100e6))


async def measure_all(impls: list[Impl]) -> list[_Side]:
    """Both executors on one relay, measured in alternating rounds so that load on the machine
    (the benchmark host is shared) hits both columns alike."""
    tmp, home, work = temp_dirs()
    with tmp:
        home.mkdir(parents=True, exist_ok=True)
        relay, registry_url = await start_relay(home)
        sides: list[_Side] = []
        try:
            for impl in impls:
                environment_id = f"{ENVIRONMENT_ID}-{impl.name}"
                exec_home = home / impl.name
                exec_home.mkdir()
                proc = await start_executor(impl, exec_home, registry_url, environment_id)
                config = NoiseRemoteConfig(registry_url, environment_id, TOKEN)
                sides.append(_Side(impl, proc, RemoteEnvironmentConnector(config)))
            for side in sides:
                side.env = await _open(side.connector, side.proc)
                await _run_one(side.env, ["true"], work)  # warm up
            for round_index in range(LATENCY_ROUNDS):
                for side in sides if round_index % 2 == 0 else sides[::-1]:
                    await _latency_round(side, work, COMMANDS // LATENCY_ROUNDS)
            for round_index in range(THROUGHPUT_RUNS):
                for side in sides if round_index % 2 == 0 else sides[::-1]:
                    await _throughput_round(side, work, relay.pid)
                    await _multi_stream_round(side, work)
            return sides
        finally:
            for side in sides:
                if side.env is not None:
                    with contextlib.suppress(Exception):
                        await asyncio.wait_for(side.env.close(), 10)
                await side.connector.aclose()
                await stop_process(side.proc)
            await stop_process(relay)


async def run() -> None:
    from bench import relay_client_bench

    impls = implementations()
    sides = await measure_all(impls)
    client = await relay_client_bench.measure(impls)
    latency = {side.impl.name: median(side.latency) for side in sides}
    throughput = {side.impl.name: median(side.rates) for side in sides}
    print_table("exec-server through the Noise relay", [
        ("relay command round trip (true)", "s", latency, "lower", 1.0),
        ("relay stdout throughput (50 MB)", "MB/s", throughput, "higher", 1.0),
        (f"relay throughput, 1 conn x {STREAMS} streams", "MB/s",
         {side.impl.name: median(side.multi_rates) for side in sides}, "higher", 1.5),
        (f"executor CPU per 100 MB, {STREAMS} streams", "s",
         {side.impl.name: median(side.multi_cpu) for side in sides}, "lower", 1.0),
        *relay_client_bench.rows(client),
    ])  # fmt: skip
    for line in relay_client_bench.notes(client):
        print(line)
    for side in sides:
        print(f"  {side.impl.name}: 1 stream MB/s {spread(side.rates)}; {STREAMS} streams MB/s "
              f"{spread(side.multi_rates)}")  # fmt: skip
    # Where the throughput runs spent CPU: shows whether the executor is the bottleneck at all.
    for side in sides:
        spent = ", ".join(f"{proc} {seconds:.2f}" for proc, seconds in side.cpu.items())
        print(f"  cpu s during {THROUGHPUT_RUNS}x50 MB, {side.impl.name} executor: {spent}")
