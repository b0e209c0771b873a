"""App-server benchmarks: the two-call exec turn latency and the agentMessage delta rate."""

from __future__ import annotations

import json
import time
from typing import Any

from bench.harness import Driver, Impl, median, start_fake_model, temp_dirs, write_config

TURNS = 8
DELTAS = 20_000


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
