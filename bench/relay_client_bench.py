"""The relay client's CPU per 100 MB of command output: pycodex's app-server against Codex's.

Codex's relay client is the exec-server client inside ``codex app-server`` (also ``codex exec`` and the
TUI), selected by the ``CODEX_EXEC_SERVER_NOISE_*`` variables; no Codex subcommand runs it on its own
(``codex exec-server`` has only the executor side and ``forward``), so its CPU cannot be read apart
from the app-server's. The row therefore compares the closest honest thing: the whole app-server
process's CPU for a turn whose ``exec_command`` prints 100 MB on a remote environment behind the relay.
The same pycodex relay and the same executor (Codex's own ``exec-server --remote``, as Codex's client
expects) serve both app-servers, so only the client side differs; order alternates between runs.

That CPU also holds each app-server's own handling of the output (deltas to its client, the model's
truncated copy). The line under the row shows the same turn on the local environment and the
difference, which approximates the remote client alone.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.harness import (
    Driver,
    Impl,
    alternating,
    cpu_seconds,
    median,
    spread,
    start_fake_model,
    temp_dirs,
    write_config,
)
from bench.relay_processes import TOKEN, start_executor, start_relay
from tests.support.procs import stop_process

OUTPUT_BYTES = int(os.environ.get("BENCH_RELAY_CLIENT_MB", "100")) * 1_000_000
RUNS = int(os.environ.get("BENCH_RUNS", "2"))  # each order once by default
ENVIRONMENT_ID = "bench-relay-client"
TURN_WAIT = 180.0
#: 100-byte lines of ``a``: printable, so the app-servers' deltas carry plain text, as real output does.
BIG_CMD = f"yes {'a' * 99} | head -c {OUTPUT_BYTES}"


def _script(cmd: str) -> list[Any]:
    call = {"type": "function_call", "name": "exec_command", "call_id": "call_big",
            "arguments": json.dumps({"cmd": cmd, "yield_time_ms": 30_000})}  # fmt: skip
    warm = {"type": "function_call", "name": "exec_command", "call_id": "call_warm",
            "arguments": json.dumps({"cmd": "true"})}  # fmt: skip
    done = {"output": [{"type": "message", "text": "done"}]}
    return [{"output": [warm]}, done, {"output": [call]}, done]


@dataclass
class _Samples:
    """One app-server implementation's CPU seconds per 100 MB, per run."""

    remote: list[float] = field(default_factory=list)
    local: list[float] = field(default_factory=list)
    #: The shared executor's CPU per 100 MB during this app-server's remote turns: alike for both, or
    #: the two app-servers did not ask it for the same work.
    executor: list[float] = field(default_factory=list)


def _command_done(params: Any) -> bool:
    item = (params or {}).get("item") or {}
    return bool(item.get("type") == "commandExecution")


async def _turn(driver: Driver, go: dict[str, Any], name: str) -> None:
    """One turn, until both it and its command completed (a command can outlive its turn's yield)."""
    command = driver.expect("item/completed", _command_done)
    done = driver.expect("turn/completed")
    await driver.call("turn/start", go, TURN_WAIT)  # the shared bench host can be very loaded
    await asyncio.wait_for(asyncio.gather(command, done), TURN_WAIT)
    item = (await command)["params"]["item"]
    if item.get("exitCode") != 0:
        raise RuntimeError(f"{name}: the command ended {item.get('status')} (exit code {item.get('exitCode')})")


async def _turn_cpu(
    impl: Impl, home: Path, work: Path, env: dict[str, str], executor_pid: int | None
) -> tuple[float, float]:
    """App-server and executor CPU seconds per 100 MB for the big turn (after a warm-up turn that opens
    the environment)."""
    model = await start_fake_model(_script(BIG_CMD), home / "model")
    write_config(home, model.url)
    driver = await Driver.spawn(impl, home, work, env)
    try:
        thread = (await driver.call("thread/start", {"cwd": str(work)}, TURN_WAIT))["thread"]["id"]
        go = {"threadId": thread, "input": [{"type": "text", "text": "go"}]}
        await _turn(driver, go, impl.name)
        before, executor_before = cpu_seconds(driver.proc.pid), cpu_seconds(executor_pid or -1)
        await _turn(driver, go, impl.name)
        spent = cpu_seconds(driver.proc.pid) - before
        executor_spent = cpu_seconds(executor_pid or -1) - executor_before
        if executor_pid is not None and not executor_spent > 0.05:
            raise RuntimeError(f"{impl.name}: the command did not run on the remote executor")
        return spent / (OUTPUT_BYTES / 100e6), executor_spent / (OUTPUT_BYTES / 100e6)
    finally:
        await driver.close()
        await model.stop()


async def measure(impls: list[Impl]) -> dict[str, _Samples]:
    """Remote and local turn CPU for each app-server, alternating which goes first."""
    codex = next((impl for impl in impls if impl.name == "codex"), None)
    if codex is None:
        return {}
    samples = {impl.name: _Samples() for impl in impls}
    tmp, home, work = temp_dirs()
    with tmp:
        home.mkdir(parents=True, exist_ok=True)
        relay, registry_url = await start_relay(home)
        (home / "executor").mkdir()
        executor = await start_executor(codex, home / "executor", registry_url, ENVIRONMENT_ID)
        noise = {"CODEX_EXEC_SERVER_NOISE_REGISTRY_URL": registry_url,
                 "CODEX_EXEC_SERVER_NOISE_ENVIRONMENT_ID": ENVIRONMENT_ID,
                 "CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN": TOKEN}  # fmt: skip
        try:
            for run in range(RUNS):
                for impl in alternating(impls, run):
                    side = samples[impl.name]
                    run_home = home / f"{impl.name}-{run}"
                    remote, executor_cpu = await _turn_cpu(impl, run_home / "remote", work, noise, executor.pid)
                    side.remote.append(remote)
                    side.executor.append(executor_cpu)
                    side.local.append((await _turn_cpu(impl, run_home / "local", work, {}, None))[0])
        finally:
            await stop_process(executor)
            await stop_process(relay)
    return samples


def rows(samples: dict[str, _Samples]) -> list[tuple[str, str, dict[str, float], str, float]]:
    """The table row: app-server CPU per 100 MB streamed through the relay (goal: no more than Codex's)."""
    if not samples:
        return []
    cpu = {name: median(side.remote) for name, side in samples.items()}
    return [("relay client: app-server CPU per 100 MB", "s", cpu, "lower", 1.0)]


def notes(samples: dict[str, _Samples]) -> list[str]:
    """Under the row: the spread, the local turn, and remote minus local (the relay client's share)."""
    lines = []
    for name, side in samples.items():
        local, remote = median(side.local), median(side.remote)
        lines.append(f"  {name} app-server CPU s per 100 MB: remote {spread(side.remote)}; local {local:.2f}; "
                     f"remote - local {remote - local:.2f}; executor {median(side.executor):.2f}")  # fmt: skip
    return lines
