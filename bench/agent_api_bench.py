"""agent_api benchmark: the wrapper's memory while its consumer stalls.

The fake agent backend writes 4096 events of 2 KB each (8 MB) as fast as it can; the consumer does not
read for a while, then drains. With bounded hops (32 per hop) the wrapper holds a few hundred KB
whatever the child writes: the child is blocked on its stdout pipe instead. We report the growth of
Python-traced memory and of the process's peak RSS over the run; both must stay under 64 MB.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from agent_api import BackendConfig, CodexBackend, Completion, RunRequest

#: The fake backend's script, by path: importing tests.support.agent_api_runs would need pytest.
FAKE_BACKEND = Path(__file__).resolve().parents[1] / "tests" / "support" / "fake_agent_backend.py"
EVENTS = 4096
PADDING = 2048
STALL_S = 1.0
LIMIT_MB = 64.0
WAIT = 120.0


def _rss_kb(field: str) -> int:
    """``VmRSS`` or ``VmHWM`` (peak) of this process in kB, 0 where /proc is unavailable."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _reset_peak_rss() -> None:
    try:
        Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current RSS (Linux >= 4.0)
    except OSError:
        pass


async def stalled_consumer_growth() -> tuple[float, float, int]:
    """(traced peak growth MB, peak RSS growth MB, events received)."""
    backend = CodexBackend(BackendConfig(binary=[sys.executable, str(FAKE_BACKEND)]))
    env = {"FAKE_CODEX_SCENARIO": "buffered_then_exit", "FAKE_CODEX_BUFFERED_EVENT_COUNT": str(EVENTS),
           "FAKE_CODEX_BUFFERED_EVENT_PADDING_BYTES": str(PADDING)}
    with tempfile.TemporaryDirectory(prefix="agent-api-bench-") as work:
        tracemalloc.start()
        _reset_peak_rss()
        base_traced, base_rss = tracemalloc.get_traced_memory()[0], _rss_kb("VmRSS")
        handle = await backend.run(RunRequest(prompt="bench", working_dir=work, env=env))
        try:
            # The stall: nobody reads; the completion must stay pending (the child is blocked).
            done, _ = await asyncio.wait({handle.completion}, timeout=STALL_S)
            if done:
                raise RuntimeError("completion resolved while the consumer was stalled")
            received = 0
            async for _event in handle.events:
                received += 1
            completion = await asyncio.wait_for(handle.completion, WAIT)
            assert isinstance(completion, Completion) and completion.exit_code == 0
        finally:
            handle.cancel.cancel()
            await asyncio.gather(handle.completion, return_exceptions=True)
        peak_traced = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        peak_rss = _rss_kb("VmHWM")
    return (peak_traced - base_traced) / 1e6, max(0, peak_rss - base_rss) / 1e3, received


async def run() -> None:
    started = time.perf_counter()
    traced, rss, received = await stalled_consumer_growth()
    elapsed = time.perf_counter() - started
    payload = EVENTS * PADDING / 1e6
    print(f"\nagent_api (stalled consumer, {EVENTS} events x {PADDING // 1024} KB = {payload:.1f} MB written)")
    print(f"{'metric':<38} {'value':>12}  target")
    for metric, value in (("traced memory growth (MB)", traced), ("peak RSS growth (MB)", rss)):
        verdict = "ok" if value < LIMIT_MB else "MISSED"
        print(f"{metric:<38} {value:>12.3f}  < {LIMIT_MB:.0f} MB {verdict}")
    print(f"{'events received':<38} {received:>12d}")
    print(f"{'wall time (s)':<38} {elapsed:>12.3f}")


if __name__ == "__main__":
    asyncio.run(run())
