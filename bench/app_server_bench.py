"""App-server benchmarks: the two-call exec turn latency, the agentMessage delta rate, and a turn whose
command prints 20 MB (latency and the server's peak RSS)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from bench.harness import Driver, Impl, median, start_fake_model, temp_dirs, write_config

TURNS = 8
DELTAS = 20_000
BIG_TURNS = 3
BIG_CMD = "head -c 20000000 /dev/zero | tr '\\0' a | fold -w 100"


def _exec_turn_script() -> list[Any]:
    call = {"type": "function_call", "name": "exec_command", "call_id": "call_1",
            "arguments": json.dumps({"cmd": "true"})}
    return [{"output": [call]}, {"output": [{"type": "message", "text": "done"}]}] * (TURNS + 1)


async def exec_turn_latency(impl: Impl) -> float:
    """Median seconds from turn/start to turn/completed for exec_command + final message."""
    tmp, home, work = temp_dirs()
    with tmp:
        model = await start_fake_model(_exec_turn_script(), home.parent)
        write_config(home, model.url)
        driver = await Driver.spawn(impl, home, work)
        try:
            thread = (await driver.call("thread/start", {"cwd": str(work)}))["thread"]["id"]
            samples = []
            for i in range(TURNS + 1):
                done = driver.expect("turn/completed")
                t0 = time.perf_counter()
                await driver.call("turn/start", {"threadId": thread, "input": [{"type": "text", "text": "go"}]})
                await done
                if i:  # the first turn warms caches on both sides
                    samples.append(time.perf_counter() - t0)
            return median(samples)
        finally:
            await driver.close()
            await model.stop()


async def delta_rate(impl: Impl) -> float:
    """item/agentMessage/delta notifications received per second for a 20,000-delta stream."""
    tmp, home, work = temp_dirs()
    deltas = [f"w{i} " for i in range(DELTAS)]
    script = [{"output": [{"type": "message", "text": "".join(deltas), "deltas": deltas}], "burst": True}] * 3
    with tmp:
        model = await start_fake_model(script, home.parent)
        write_config(home, model.url)
        driver = await Driver.spawn(impl, home, work)
        try:
            thread = (await driver.call("thread/start", {"cwd": str(work)}))["thread"]["id"]
            rates = []
            for _ in range(2):
                before = driver.counts.get("item/agentMessage/delta", 0)
                done = driver.expect("turn/completed")
                t0 = time.perf_counter()
                await driver.call("turn/start", {"threadId": thread, "input": [{"type": "text", "text": "go"}]})
                await done
                got = driver.counts.get("item/agentMessage/delta", 0) - before
                rates.append(got / (time.perf_counter() - t0))
            return max(rates)
        finally:
            await driver.close()
            await model.stop()


def _peak_rss_mib(pid: int) -> float:
    """The process's high-water resident set (VmHWM), in MiB; NaN where /proc is unavailable."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return float("nan")
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def big_output_turn(impl: Impl) -> tuple[float, float]:
    """(median seconds from turn/start to turn/completed, peak RSS MiB) for a command printing 20 MB."""
    call = {"type": "function_call", "name": "exec_command", "call_id": "call_big",
            "arguments": json.dumps({"cmd": BIG_CMD})}
    script = [{"output": [call]}, {"output": [{"type": "message", "text": "done"}]}] * BIG_TURNS
    tmp, home, work = temp_dirs()
    with tmp:
        model = await start_fake_model(script, home.parent)
        write_config(home, model.url)
        driver = await Driver.spawn(impl, home, work)
        try:
            thread = (await driver.call("thread/start", {"cwd": str(work)}))["thread"]["id"]
            samples = []
            for _ in range(BIG_TURNS):
                done = driver.expect("turn/completed")
                t0 = time.perf_counter()
                await driver.call("turn/start", {"threadId": thread, "input": [{"type": "text", "text": "go"}]})
                await asyncio.wait_for(done, 120)
                samples.append(time.perf_counter() - t0)
            return median(samples), _peak_rss_mib(driver.proc.pid)
        finally:
            await driver.close()
            await model.stop()
