"""Fuzzy file search benchmark: the latency of one `fuzzyFileSearch` query on a generated 100k-file tree.

Both implementations get the same tree (nested folders, a root `.gitignore` hiding one subtree) and the
same query; each answers it ROUNDS times and the median counts (neither keeps a listing between
stateless requests, so every round walks the tree). Codex is asked over its app-server's stdio; pycodex
the same way once its app-server serves the method, until then through the domain function in-process
(`app_server.search.fuzzy`), which leaves out a few milliseconds of JSON-RPC overhead.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from app_server.search.fuzzy import fuzzy_file_search
from bench.harness import (
    PAIRED_RUNS,
    Driver,
    Impl,
    alternating,
    implementations,
    median,
    paired,
    print_table,
    temp_dirs,
)

FILES = 100_000
PER_DIR = 50
QUERY = "modl42"
ROUNDS = 3
WORDS = ("model", "view", "controller", "service", "util", "test", "config", "handler", "schema", "index")


def make_tree(root: Path, files: int = FILES) -> None:
    """`files` empty files, PER_DIR to a folder, two levels deep; `ignored/` is gitignored."""
    (root / ".gitignore").write_text("ignored/\n*.tmp\n")
    for n in range(files):
        folder = root / f"pkg{n // (PER_DIR * 40)}" / f"mod{(n // PER_DIR) % 40}_{n // PER_DIR}"
        if n % PER_DIR == 0:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{WORDS[n % len(WORDS)]}_{n}.py").touch()
    ignored = root / "ignored"
    ignored.mkdir()
    for n in range(1000):
        (ignored / f"model_{n}.py").touch()


async def _timed(call: Callable[[], Awaitable[object]]) -> float:
    samples = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - start)
    return median(samples)


async def query_latency(impl: Impl, home: Path, tree: Path) -> float:
    params = {"query": QUERY, "roots": [str(tree)]}
    driver = await Driver.spawn(impl, home, tree)
    try:
        try:
            await driver.call("fuzzyFileSearch", params)
        except RuntimeError:
            if impl.name != "pycodex":
                raise
            return await _timed(lambda: asyncio.to_thread(fuzzy_file_search, QUERY, [str(tree)]))
        return await _timed(lambda: driver.call("fuzzyFileSearch", params, timeout=120))
    finally:
        await driver.close()


async def run() -> None:
    tmp, home, work = temp_dirs()
    with tmp:
        home.mkdir()
        await asyncio.to_thread(make_tree, work)
        samples: dict[str, list[float]] = {}
        for run_index in range(PAIRED_RUNS):
            for impl in alternating(implementations(), run_index):
                samples.setdefault(impl.name, []).append(await query_latency(impl, home, work))
        latency = paired(samples)
    print_table("fuzzy file search", [
        (f"one query, {FILES // 1000}k files", "s", latency, "lower", 3.0),
    ])
