"""Ending subprocesses that a test (or benchmark) started: by its own handle, with a deadline."""

from __future__ import annotations

import asyncio


async def stop_process(proc: asyncio.subprocess.Process, timeout: float = 10) -> None:
    """SIGTERM, wait up to ``timeout``, then SIGKILL; a process that already exited is left alone."""
    if proc.returncode is not None:
        return
    proc.terminate()
    try:
        await asyncio.wait_for(proc.wait(), timeout)
    except TimeoutError:
        proc.kill()
        await asyncio.wait_for(proc.wait(), timeout)
