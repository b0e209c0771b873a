"""Signals of long-running subcommands: graceful stop (an event the main task waits on), and SIGUSR1.

SIGUSR1 asks a running server for a dump of its stacks. Its default action ends the process, so
``survive_usr1`` is the first thing the CLI does: until a server installs its own handler (the app-server
dumps its asyncio tasks), SIGUSR1 prints every thread's Python stack to stderr instead of killing.
"""

from __future__ import annotations

import contextlib
import faulthandler
import signal
from collections.abc import Callable, Iterable, Iterator
from types import FrameType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # `--version` imports this module first: asyncio costs more than the rest of it
    import asyncio

__all__ = ["INTERRUPTED_EXIT", "TermLatch", "Terminated", "quiet_interrupt", "stop_on_signals", "survive_usr1"]

#: The exit status of a command stopped by Ctrl-C (128 + SIGINT), as a shell reports it.
INTERRUPTED_EXIT = 128 + signal.SIGINT


def stop_on_signals(signals: Iterable[signal.Signals] = (signal.SIGINT, signal.SIGTERM)) -> asyncio.Event:
    """An event the running loop sets on any of ``signals`` (where the platform allows handlers)."""
    import asyncio

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in signals:
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    return stop


def quiet_interrupt(run: Callable[[], int]) -> int:
    """Run a command; a Ctrl-C that reaches it as ``KeyboardInterrupt`` (during start-up, before the command
    installs its own SIGINT handling) ends it with status 130 and no traceback."""
    try:
        return run()
    except KeyboardInterrupt:
        return INTERRUPTED_EXIT


def survive_usr1() -> None:
    """SIGUSR1 dumps the threads' stacks to stderr (not fatal) until a server replaces the handler."""
    with contextlib.suppress(AttributeError, ValueError, RuntimeError):  # no SIGUSR1 (Windows), no stderr fd
        faulthandler.register(signal.SIGUSR1, all_threads=True)


class Terminated(Exception):
    """SIGTERM arrived while a ``TermLatch`` was interrupting."""


class TermLatch:
    """Holds SIGTERM for a server that is still starting, before its event loop handles the signal.

    Installed, it turns SIGTERM from fatal into ``fired`` (the server stops as soon as it can listen for
    it); inside ``interrupting()`` the signal also raises ``Terminated``, to abandon a blocking read.
    Outside the main thread (where no handler can be set) it does nothing.
    """

    def __init__(self) -> None:
        self.fired = False
        self._interrupting = False
        with contextlib.suppress(ValueError):
            signal.signal(signal.SIGTERM, self._on_term)

    def _on_term(self, _signum: int, _frame: FrameType | None) -> None:
        self.fired = True
        if self._interrupting:
            raise Terminated

    @contextlib.contextmanager
    def interrupting(self) -> Iterator[None]:
        """Within this block SIGTERM raises ``Terminated`` (at once if it already fired), to abandon a
        blocking call."""
        if self.fired:
            raise Terminated
        self._interrupting = True
        try:
            yield
        finally:
            self._interrupting = False
