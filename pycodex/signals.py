"""Graceful stop for long-running subcommands (exec-server, relay): SIGINT/SIGTERM set an event."""

from __future__ import annotations

import asyncio
import contextlib
import signal

__all__ = ["stop_on_signals"]


def stop_on_signals() -> asyncio.Event:
    """An event the running loop sets on SIGINT or SIGTERM (where the platform allows handlers)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    return stop
