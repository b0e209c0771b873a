"""Graceful stop for long-running subcommands: a signal sets an event the main task waits on."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Iterable

__all__ = ["stop_on_signals"]


def stop_on_signals(signals: Iterable[signal.Signals] = (signal.SIGINT, signal.SIGTERM)) -> asyncio.Event:
    """An event the running loop sets on any of ``signals`` (where the platform allows handlers)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in signals:
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    return stop
