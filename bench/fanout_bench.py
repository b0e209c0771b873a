"""Fan-out benchmark: N websocket clients on one app-server (``--listen ws://127.0.0.1:PORT``), each starting
its own thread and one turn against the fake model, all at once.

Reported per N: the server's CPU per client (linear fan-out keeps it flat as N grows), the p50 of the
clients' turn latency, and how many ``thread/status/changed`` notifications a client got per thread (its
own and the others'). ``python -m bench fanout`` prints the rows; ``counts`` alone (``python -m
bench.fanout_bench counts``) prints what an idle second connection receives while the first runs a turn,
which is how pycodex's routing was matched to Codex's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from bench.harness import Impl, implementations, start_fake_model, temp_dirs, write_config

CLIENTS = tuple(int(n) for n in os.environ.get("PYCODEX_BENCH_FANOUT", "50,200,500").split(","))
#: A realistic reply: a few paragraphs streamed as ~60 deltas (not a 2-character message).
_TEXT = ("The change touches the request path only; the tests cover both branches. " * 40).strip()
_DELTAS = [_TEXT[i:i + 50] for i in range(0, len(_TEXT), 50)]
_REPLY = [{"output": [{"type": "message", "text": _TEXT, "deltas": _DELTAS}]}]
STATUS = "thread/status/changed"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _cpu_s(pid: int) -> float:
    """CPU seconds of a live process, from its CPU-time clock (nanosecond resolution on Linux)."""
    return time.clock_gettime(((~pid) << 3) | 2)


@dataclass
class WsClient:
    """One websocket client: requests by id, notifications counted by method (and per thread)."""

    ws: ClientConnection
    counts: dict[str, int] = field(default_factory=dict)
    status_by_thread: dict[str, int] = field(default_factory=dict)
    _next: int = 0
    _waiters: dict[int, asyncio.Future[Any]] = field(default_factory=dict)
    _completed: dict[str, asyncio.Future[None]] = field(default_factory=dict)
    _reader: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start reading frames."""
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        with contextlib.suppress(ConnectionClosed):
            await self._read_frames()

    async def _read_frames(self) -> None:
        async for frame in self.ws:
            text = frame if isinstance(frame, str) else frame.decode()
            start = text.find('"method":"')
            if start < 0:  # a response
                msg = json.loads(text)
                fut = self._waiters.pop(msg.get("id"), None)
                if fut is not None and not fut.done():
                    fut.set_result(msg)
                continue
            # Only the method is read of most notifications: with 500 clients the bench's own process gets
            # hundreds of thousands, and a client that falls 20 s behind misses the server's keepalive ping.
            start += len('"method":"')
            method = text[start:text.index('"', start)]
            self.counts[method] = self.counts.get(method, 0) + 1
            if method not in (STATUS, "turn/completed"):
                continue
            params = json.loads(text).get("params") or {}
            if method == STATUS:
                tid = params.get("threadId", "")
                self.status_by_thread[tid] = self.status_by_thread.get(tid, 0) + 1
            elif method == "turn/completed":
                done = self._completed.get(params.get("threadId", ""))
                if done is not None and not done.done():
                    done.set_result(None)

    def completion(self, thread: str) -> asyncio.Future[None]:
        """A future set when ``thread``'s next turn/completed arrives."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._completed[thread] = fut
        return fut

    async def call(self, method: str, params: Any, timeout: float = 300) -> Any:
        """Send a request and wait for its result."""
        self._next += 1
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiters[self._next] = fut
        await self.ws.send(json.dumps({"id": self._next, "method": method, "params": params}))
        msg = await asyncio.wait_for(fut, timeout)
        if "error" in msg:
            raise RuntimeError(f"{method}: {msg['error']}")
        return msg["result"]

    async def close(self) -> None:
        """Close the socket and stop reading."""
        await self.ws.close()
        if self._reader is not None:
            self._reader.cancel()


class WsServer:
    """An app-server listening on a loopback websocket port."""

    def __init__(self, proc: asyncio.subprocess.Process, url: str) -> None:
        self.proc, self.url = proc, url

    @classmethod
    async def spawn(cls, impl: Impl, home: Path, cwd: Path) -> WsServer:
        url = f"ws://127.0.0.1:{_free_port()}"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "OPENAI_"))}
        env.update(CODEX_HOME=str(home), RUST_LOG="error", PYCODEX_LOG="error")
        proc = await asyncio.create_subprocess_exec(
            *impl.argv, "app-server", "--listen", url, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL, cwd=cwd, env=env)
        return cls(proc, url)

    async def client(self, timeout: float = 30.0) -> WsClient:
        """Connect (retrying while the server starts) and initialize."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                ws = await connect(self.url, max_size=None, ping_interval=None, open_timeout=timeout)
                break
            except OSError:
                if time.monotonic() > deadline or self.proc.returncode is not None:
                    raise
                await asyncio.sleep(0.05)
        client = WsClient(ws)
        client.start()
        for _ in range(100):  # a server may refuse (-32001) while hundreds connect at once
            try:
                await client.call("initialize", {"clientInfo": {"name": "bench", "version": "1"},
                                                 "capabilities": {"experimentalApi": True}})
                break
            except RuntimeError as exc:
                if "-32001" not in str(exc):
                    raise
                await asyncio.sleep(0.1)
        await ws.send(json.dumps({"method": "initialized"}))
        return client

    async def stop(self) -> None:
        """Kill the server by its pid and reap it."""
        if self.proc.returncode is None:
            self.proc.kill()
        await self.proc.wait()


async def _turn(client: WsClient, cwd: str) -> tuple[str, float]:
    """Start a thread and run one turn on it: (thread id, seconds from turn/start to turn/completed)."""
    thread = (await client.call("thread/start", {"cwd": cwd}))["thread"]["id"]
    done = client.completion(thread)
    t0 = time.perf_counter()
    await client.call("turn/start", {"threadId": thread, "input": [{"type": "text", "text": "go"}]})
    await asyncio.wait_for(done, 600)
    return thread, time.perf_counter() - t0


async def _settle(watcher: WsClient, threads: list[str], timeout: float = 20.0) -> None:
    """Wait (bounded) until ``watcher`` has both status changes of each thread's turn, then make one round
    trip on it: whatever the server had queued for it before arrives ahead of that answer."""
    deadline = time.monotonic() + timeout
    while any(watcher.status_by_thread.get(t, 0) < 2 for t in threads) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    await watcher.call("thread/loaded/list", {})


async def fanout(impl: Impl, clients: int) -> tuple[float, float, float]:
    """(server CPU ms per client, p50 turn seconds, status notifications per client per thread) for
    ``clients`` websocket clients each running one thread's turn at once."""
    tmp, home, work = temp_dirs()
    with tmp:
        model = await start_fake_model(_REPLY, home.parent)
        write_config(home, model.url)
        server = await WsServer.spawn(impl, home, work)
        conns: list[WsClient] = []
        try:
            conns.append(await server.client())
            while len(conns) < clients:  # connect in batches: the bench measures turns, not accept storms
                batch = min(25, clients - len(conns))
                conns.extend(await asyncio.gather(*(server.client() for _ in range(batch))))
            before = _cpu_s(server.proc.pid)
            lat = sorted(s for _, s in await asyncio.gather(*(_turn(c, str(work)) for c in conns)))
            cpu = _cpu_s(server.proc.pid) - before
            # Let the last notifications (other threads' status changes) arrive before counting.
            await asyncio.sleep(0.5)
            status = statistics.mean(c.counts.get(STATUS, 0) for c in conns) / clients
            return 1000 * cpu / clients, lat[len(lat) // 2], status
        finally:
            for conn in conns:
                await conn.close()
            await server.stop()
            await model.stop()


async def counts(impl: Impl) -> dict[str, Any]:
    """What each of two connections receives while the first starts a thread and runs a turn on it."""
    tmp, home, work = temp_dirs()
    with tmp:
        model = await start_fake_model(_REPLY, home.parent)
        write_config(home, model.url)
        server = await WsServer.spawn(impl, home, work)
        try:
            first, second = await server.client(), await server.client()
            threads = [await _turn(first, str(work)) for _ in range(2)]
            await _settle(second, [thread for thread, _ in threads])
            result = {"runner": dict(first.counts), "watcher": dict(second.counts),
                      "runner_status": dict(first.status_by_thread), "watcher_status": dict(second.status_by_thread)}
            await first.close()
            await second.close()
            return result
        finally:
            await server.stop()
            await model.stop()


def print_rows(results: dict[int, dict[str, tuple[float, float, float]]]) -> None:
    """One block per N; CPU per client must stay flat (at most 1.25x the smallest N's) and below Codex's."""
    print("\nfan-out: N websocket clients, one thread and turn each, at once")
    print(f"{'metric':<46} {'pycodex':>9} {'codex':>9} {'ratio':>7}  goal")
    base = results[min(results)]["pycodex"][0]
    for n, by_impl in results.items():
        ours, theirs = by_impl["pycodex"], by_impl.get("codex", (float("nan"),) * 3)
        growth = ours[0] / base
        print(f"{f'{n} clients: server CPU per client (ms)':<46} {ours[0]:>9.2f} {theirs[0]:>9.2f} "
              f"{ours[0] / theirs[0]:>6.2f}x  <= 1.25x of {min(results)} clients' ({growth:.2f}) "
              f"{'ok' if growth <= 1.25 else 'MISSED'}")
        print(f"{f'{n} clients: turn p50 (s)':<46} {ours[1]:>9.3f} {theirs[1]:>9.3f} {ours[1] / theirs[1]:>6.2f}x")
        print(f"{f'{n} clients: status notices per client/thread':<46} {ours[2]:>9.2f} {theirs[2]:>9.2f} "
              f"{ours[2] / theirs[2]:>6.2f}x  = Codex's {'ok' if abs(ours[2] - theirs[2]) < 0.05 else 'MISSED'}")


async def run() -> None:
    """Every N, both servers, alternating which goes first."""
    impls = implementations()
    results: dict[int, dict[str, tuple[float, float, float]]] = {}
    for i, n in enumerate(CLIENTS):
        results[n] = {}
        for impl in impls if i % 2 == 0 else impls[::-1]:
            try:
                results[n][impl.name] = await fanout(impl, n)
            except (TimeoutError, RuntimeError, ConnectionClosed, OSError) as exc:
                # One server that cannot keep up must not cost the other rows: its cells print as nan.
                print(f"fan-out: {impl.name} with {n} clients failed: {type(exc).__name__}: {exc}")
                results[n][impl.name] = (float("nan"),) * 3
    print_rows(results)


async def _counts_main() -> None:
    for impl in implementations():
        print(impl.name, json.dumps(await counts(impl), indent=1, sort_keys=True))


if __name__ == "__main__":
    asyncio.run(_counts_main() if sys.argv[1:] == ["counts"] else run())
