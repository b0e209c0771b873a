"""``python -m bench trace``: what ``--trace`` costs a turn. Two servers run side by side, one writing a
trace, and take turns (alternating which goes first) so machine load hits both alike; the target is at most
10 % more latency. On a loaded machine single runs scatter by ±20 %: compare several."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from bench.app_server_bench import _exec_turn_script
from bench.harness import Driver, implementations, median, start_fake_model, temp_dirs, write_config

TURNS = 20
STREAM_DELTAS = 2_000
TARGET = 1.10


def _stream_script() -> list[Any]:
    deltas = [f"w{i} " for i in range(STREAM_DELTAS)]
    return [{"output": [{"type": "message", "text": "".join(deltas), "deltas": deltas}]}] * (TURNS + 1)


async def _latencies(script: list[Any]) -> tuple[float, float]:
    """Median turn latency (seconds) without and with a trace."""
    impl = next(i for i in implementations() if i.name == "pycodex")
    tmp, home, work = temp_dirs()
    with tmp:
        trace = Path(tmp.name, "bench.trace")
        drivers: list[Driver] = []
        models = []
        try:
            for name, env in (("plain", {}), ("traced", {"PYCODEX_TRACE": str(trace)})):
                model = await start_fake_model(script, home.parent / name)
                models.append(model)
                write_config(home.parent / name / "home", model.url)
                drivers.append(await Driver.spawn(impl, home.parent / name / "home", work, env))
            threads = [(await d.call("thread/start", {"cwd": str(work)}))["thread"]["id"] for d in drivers]
            samples: list[list[float]] = [[], []]
            for turn in range(TURNS + 1):
                order = [0, 1] if turn % 2 else [1, 0]  # neither server always goes first
                for index in order:
                    driver, thread = drivers[index], threads[index]
                    done = driver.expect("turn/completed")
                    t0 = time.perf_counter()
                    await driver.call("turn/start", {"threadId": thread, "input": [{"type": "text", "text": "go"}]})
                    await done
                    if turn:  # the first turn warms caches
                        samples[index].append(time.perf_counter() - t0)
        finally:
            for driver in drivers:
                await driver.close()
            for model in models:
                await model.stop()
        return median(samples[0]), median(samples[1])


async def run() -> None:
    print("\ntrace (--trace / $PYCODEX_TRACE)")
    print(f"{'metric':<38} {'no trace':>12} {'trace':>12} {'ratio':>8}  target")
    for metric, script in (("two-call exec turn latency", _exec_turn_script()),
                           (f"{STREAM_DELTAS}-delta message turn latency", _stream_script())):
        plain, traced = await _latencies(script)
        ratio = traced / plain if plain else float("nan")
        verdict = "ok" if ratio <= TARGET else "MISSED"
        print(f"{metric + ' (s)':<38} {plain:>12.4f} {traced:>12.4f} {ratio:>7.2f}x  <= {TARGET:.2f}x {verdict}")
