"""Provided environments: ``thread/start`` latency with a warm pool, with a cold container, and locally.

The app-server runs in this process (the tests' in-memory harness) so the benchmark can wait for the warm
pool to fill before each round; the boxes are real Podman containers of the local image
(``app_server.providers.image``), registered through the in-process relay. Codex has no counterpart (its
only placement is OpenAI's cloud), so the table has one column. Skipped, saying why, where podman cannot
run a container.
"""

from __future__ import annotations

import time
from pathlib import Path

from bench.harness import median, spread, temp_dirs, write_config
from tests.providers.podman_support import containers, remove_owned, write_environments
from tests.support.appserver_memory import MemoryAppServerClient
from tests.support.tools import PODMAN_REASON, podman_image

ROUNDS = 3
WAIT = 120.0
DEAD_MODEL = "http://127.0.0.1:9/v1"  # thread/start never calls the model


async def _thread_starts(home: Path, work: Path, *, pool_size: int | None) -> list[float]:
    """ROUNDS thread/start round trips (each thread archived after): local when ``pool_size`` is None."""
    write_config(home, DEAD_MODEL)
    if pool_size is not None:
        write_environments(home, pool_size=pool_size, reap_interval_s=5, mounts=[f"{work}:{work}:rw"])
    client = await MemoryAppServerClient.spawn(None, codex_home=home, cwd=work, label="bench-provider")
    pool = client.app.environments.pool
    samples: list[float] = []
    try:
        await client.initialize()
        for _ in range(ROUNDS):
            if pool is not None and pool_size:
                await pool.wait_warm(WAIT)
            start = time.perf_counter()
            thread = (await client.call("thread/start", {"cwd": str(work)}, timeout=WAIT))["thread"]["id"]
            samples.append(time.perf_counter() - start)
            await client.call("thread/archive", {"threadId": thread}, timeout=WAIT)
    finally:
        await client.close(timeout=WAIT)
        if pool is not None:
            left = await remove_owned(pool.owner)
            if left or await containers(pool.owner):
                print(f"  provider bench: removed containers left behind: {left}")
    return samples


async def run() -> None:
    """Print the provided-environment thread start table."""
    print("\nenvironment providers: thread/start (in-process app-server, podman boxes)")
    if podman_image() is None:
        print(f"  skipped: {PODMAN_REASON}")
        return
    rows: list[tuple[str, list[float]]] = []
    for label, size in (("local environment", None), ("warm pool (podman)", 1), ("cold container (podman)", 0)):
        tmp, home, work = temp_dirs()
        with tmp:
            rows.append((label, await _thread_starts(home, work, pool_size=size)))
    print(f"{'metric':<44} {'median':>10}  spread")
    for label, samples in rows:
        print(f"{'thread start, ' + label + ' (s)':<44} {median(samples):>10.3f}  {spread(samples)}")
