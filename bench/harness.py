"""Shared pieces of the benchmarks: the two implementations, a minimal stdio JSON-RPC driver, the fake
model server, and the table printer."""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.fake_model import FakeModel

REPO = Path(__file__).resolve().parents[1]
CODEX_BIN = Path(os.environ.get("PYCODEX_CODEX_BIN") or
                 REPO / "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex")


@dataclass(frozen=True)
class Impl:
    name: str
    argv: list[str]  # the command prefix; the subcommand follows


def implementations() -> list[Impl]:
    impls = [Impl("pycodex", [sys.executable, "-m", "pycodex"])]
    if CODEX_BIN.exists():
        impls.append(Impl("codex", [str(CODEX_BIN)]))
    return impls


#: Rows measured once per server run twice, once in each order (see ``alternating``).
PAIRED_RUNS = 2


def alternating(impls: list[Impl], run: int) -> list[Impl]:
    """The servers in the order the ``run``-th repetition measures them: which goes first alternates, so
    the machine's load (and warm caches) favour neither column."""
    return impls if run % 2 == 0 else impls[::-1]


def paired(samples: dict[str, list[float]]) -> dict[str, float]:
    """The median of each server's samples."""
    return {name: median(values) for name, values in samples.items()}


async def start_fake_model(script: list[Any], tmp: Path) -> FakeModel:
    """The shared fake Responses server, repeating its last response once the script runs out."""
    return await FakeModel.start({"responses": script, "when_exhausted": "repeat_last"}, tmp)


def write_config(home: Path, url: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        'model = "mock-model"\napproval_policy = "never"\nsandbox_mode = "workspace-write"\n'
        'model_provider = "mock_provider"\n\n[model_providers.mock_provider]\nname = "Mock"\n'
        f'base_url = "{url}"\nwire_api = "responses"\nrequest_max_retries = 0\nstream_max_retries = 0\n')


class Driver:
    """Just enough of a client: requests, and a reader that counts notifications by method."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self._id = 0
        self.counts: dict[str, int] = {}
        self._waiters: dict[Any, asyncio.Future[Any]] = {}
        self._events: list[tuple[str, asyncio.Future[Any], Callable[[Any], bool]]] = []
        self._reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def spawn(cls, impl: Impl, home: Path, cwd: Path, env: dict[str, str] | None = None) -> Driver:
        full_env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "OPENAI_"))}
        full_env.update(CODEX_HOME=str(home), RUST_LOG="error", PYCODEX_LOG="error", **(env or {}))
        proc = await asyncio.create_subprocess_exec(
            *impl.argv, "app-server", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, cwd=cwd, env=full_env, limit=1 << 26)
        driver = cls(proc)
        await driver.call("initialize", {"clientInfo": {"name": "bench", "version": "1"},
                                         "capabilities": {"experimentalApi": True}})
        await driver.notify("initialized")  # what real clients send next
        return driver

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            msg = json.loads(line)
            if "id" in msg and "method" not in msg:
                fut = self._waiters.pop(msg["id"], None)
                if fut is not None and not fut.done():
                    fut.set_result(msg)
                continue
            method = msg.get("method", "")
            self.counts[method] = self.counts.get(method, 0) + 1
            for entry in list(self._events):
                name, fut, pred = entry
                if name == method and not fut.done() and pred(msg.get("params")):
                    fut.set_result(msg)
                    self._events.remove(entry)
        for fut in [*self._waiters.values(), *(entry[1] for entry in self._events)]:
            if not fut.done():  # the server exited: fail now rather than at the timeout
                fut.set_exception(RuntimeError(f"server exited (status {await self.proc.wait()})"))

    def expect(self, method: str, pred: Callable[[Any], bool] = lambda _p: True) -> asyncio.Future[Any]:
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._events.append((method, fut, pred))
        return fut

    async def notify(self, method: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"method": method}).encode() + b"\n")
        await self.proc.stdin.drain()

    async def call(self, method: str, params: Any, timeout: float = 60) -> Any:
        self._id += 1
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiters[self._id] = fut
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"id": self._id, "method": method, "params": params}).encode() + b"\n")
        await self.proc.stdin.drain()
        msg = await asyncio.wait_for(fut, timeout)
        if "error" in msg:
            raise RuntimeError(f"{method}: {msg['error']}")
        return msg["result"]

    async def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), 10)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
        self._reader.cancel()


def temp_dirs() -> tuple[tempfile.TemporaryDirectory[str], Path, Path]:
    tmp = tempfile.TemporaryDirectory(prefix="pycodex-bench-")
    home, work = Path(tmp.name, "home"), Path(tmp.name, "work")
    work.mkdir()
    return tmp, home, work


async def timed_turns(driver: Driver, thread: str, inputs: list[Any], turns: int,
                      timeout: float = 120.0) -> list[float]:
    """Seconds from turn/start to turn/completed for each of ``turns`` turns with ``inputs``, one after another."""
    samples = []
    for _ in range(turns):
        done = driver.expect("turn/completed")
        t0 = time.perf_counter()
        await driver.call("turn/start", {"threadId": thread, "input": inputs})
        await asyncio.wait_for(done, timeout)
        samples.append(time.perf_counter() - t0)
    return samples


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def spread(values: list[float]) -> str:
    """``min..max over n`` for the rows that report a median of several runs."""
    if not values:
        return "no runs"
    return f"{min(values):.3g}..{max(values):.3g} over {len(values)} runs"


def cpu_seconds(pid: int) -> float:
    """User+system CPU of ``pid`` so far (Linux ``/proc``); NaN elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    """Resident set size of ``pid`` in MiB (Linux ``/proc``); NaN elsewhere."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def print_table(title: str, rows: list[tuple[str, str, dict[str, float], str, float]]) -> None:
    """rows: (metric, unit, {impl: value}, better, target ratio) with better 'lower' or 'higher'."""
    print(f"\n{title}")
    print(f"{'metric':<38} {'pycodex':>12} {'codex':>12} {'ratio':>8}  target")
    for metric, unit, values, better, goal in rows:
        ours, theirs = values.get("pycodex", float("nan")), values.get("codex", float("nan"))
        ratio = ours / theirs if theirs and theirs == theirs else float("nan")
        met = ratio <= goal if better == "lower" else ratio >= goal
        target = f"{'<=' if better == 'lower' else '>='} {goal:.1f}x {'ok' if met else 'MISSED'}"
        print(f"{metric + ' (' + unit + ')':<38} {ours:>12.3f} {theirs:>12.3f} {ratio:>7.2f}x  {target}")
