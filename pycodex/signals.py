"""Signals of long-running subcommands: graceful stop (an event the main task waits on), and SIGUSR1.

SIGUSR1 asks a running server for a dump of its stacks. Its default action ends the process, so
``survive_usr1`` is the first thing the CLI does: until a server installs its own handler (the app-server
dumps its asyncio tasks), SIGUSR1 prints every thread's Python stack to stderr instead of killing.
"""

from __future__ import annotations

import contextlib
import faulthandler
import signal
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # `--version` imports this module first: asyncio costs more than the rest of it
    import asyncio

__all__ = ["stop_on_signals", "survive_usr1"]


def stop_on_signals(signals: Iterable[signal.Signals] = (signal.SIGINT, signal.SIGTERM)) -> asyncio.Event:
    """An event the running loop sets on any of ``signals`` (where the platform allows handlers)."""
    import asyncio

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in signals:
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    return stop


def survive_usr1() -> None:
    """SIGUSR1 dumps the threads' stacks to stderr (not fatal) until a server replaces the handler."""
    with contextlib.suppress(AttributeError, ValueError, RuntimeError):  # no SIGUSR1 (Windows), no stderr fd
        faulthandler.register(signal.SIGUSR1, all_threads=True)
