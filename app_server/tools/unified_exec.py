"""Unified exec sessions: ``exec_command`` starts a process and waits up to ``yield_time_ms``; a process
still running then stays open as a session that ``write_stdin`` continues.

Output is pumped by one task per process into two head-and-tail buffers of 1 MiB each (as Codex
does): one that ``collect`` drains, holding what arrived since the previous call, and the process's
transcript for its item. Past the cap only counts grow, so a chatty process cannot grow memory.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass

from app_server.tools.output import CollectedOutput, HeadTailBuffer
from app_server.tools.processes import ExecProcess, ProcessLost

__all__ = ["CollectResult", "ExecSession", "UnifiedExec", "UnknownSession", "clamp_yield_ms"]

logger = logging.getLogger(__name__)

MIN_YIELD_MS = 250
MAX_YIELD_MS = 30_000
DEFAULT_EXEC_YIELD_MS = 10_000
DEFAULT_WRITE_YIELD_MS = 250
DEFAULT_POLL_YIELD_MS = 5_000
#: After the process exits, how long to wait for its output pipe to close (a background child may
#: keep it open forever).
_EOF_GRACE_S = 0.2
MAX_SESSIONS = 64
#: Codex streams at most this many output deltas per command; the buffers still get all of the output.
MAX_OUTPUT_DELTAS = 10_000

OutputCallback = Callable[[str], Awaitable[None]]


def clamp_yield_ms(value: float | None, default: int) -> int:
    """The model's ``yield_time_ms`` kept within the allowed range; ``default`` when it gave none."""
    if value is None:
        return default
    return int(min(max(value, MIN_YIELD_MS), MAX_YIELD_MS))


class UnknownSession(Exception):
    """``write_stdin`` named a session id that is not open."""


@dataclass
class CollectResult:
    """What one wait on a session gathered: its output, and its exit code or its still-open session id."""

    output: CollectedOutput
    exit_code: int | None
    session_id: int | None
    wall_time_s: float
    #: Why the process's end cannot be known (its exec-server went away); None otherwise.
    lost: str | None = None


class ExecSession:
    """One running process and its output buffer."""

    def __init__(self, session_id: int, process: ExecProcess, on_output: OutputCallback | None) -> None:
        self.id = session_id
        self.process = process
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")  # for the streamed deltas
        self._pending = HeadTailBuffer()
        #: The whole process's output, bounded the same way: the item's ``aggregatedOutput``.
        self.transcript = HeadTailBuffer()
        self.on_output = on_output
        self._deltas_sent = 0
        self._changed = asyncio.Event()
        self.output_closed = asyncio.Event()
        self.exited = asyncio.Event()
        self.exit_code: int | None = None
        #: Set instead of ``exit_code`` when the environment lost the process (see ``ProcessLost``).
        self.lost: str | None = None
        #: Completes the command's item when the process exits after exec_command returned.
        self.watcher: asyncio.Task[None] | None = None
        #: (item id, command, cwd) of the commandExecution item, for thread/backgroundTerminals/list.
        self.label: tuple[str, str, str] | None = None
        self._pump = asyncio.get_running_loop().create_task(self._run(), name=f"exec-pump-{session_id}")

    async def _run(self) -> None:
        reader = asyncio.get_running_loop().create_task(self._read_all())
        try:
            try:
                self.exit_code = await self.process.wait()
            except ProcessLost as exc:  # ends the session now rather than at the model's yield time
                self.lost = str(exc)
            self.exited.set()
            self._changed.set()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(reader), _EOF_GRACE_S)
        finally:
            if not reader.done():
                reader.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await reader
            self.output_closed.set()
            self._changed.set()

    async def _read_all(self) -> None:
        while True:
            chunk = await self.process.read()
            if not chunk:
                return
            self._pending.push(chunk)
            self.transcript.push(chunk)
            self._changed.set()
            if self.on_output is None or self._deltas_sent >= MAX_OUTPUT_DELTAS:
                continue
            text = self._decoder.decode(chunk)
            if text:
                self._deltas_sent += 1
                await self.on_output(text)

    def take_output(self) -> CollectedOutput:
        """What arrived since the previous call (head and tail of it, with exact counts)."""
        return self._pending.drain()

    @property
    def finished(self) -> bool:
        """Whether the process has exited and its output is fully read."""
        return self.exited.is_set() and self.output_closed.is_set()

    async def wait_until(self, deadline: float) -> None:
        """Return when the process has finished or the deadline passed."""
        while not self.finished:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            self._changed.clear()
            if self.finished:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), remaining)

    async def wait_finished(self) -> None:
        """Wait until the process has exited and its output is fully read."""
        await self.exited.wait()
        await self.output_closed.wait()

    async def close(self) -> None:
        """Kill the process and wait, bounded, for its output pump to stop."""
        if self.watcher is not None:
            self.watcher.cancel()
        await self.process.kill()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.wait_for(self._pump, 5)


class UnifiedExec:
    """The exec sessions of one thread."""

    def __init__(self) -> None:
        self._sessions: dict[int, ExecSession] = {}
        self._next_id = 1
        self._watchers: set[asyncio.Task[None]] = set()  # strong references while they run

    def open(self, process: ExecProcess, on_output: OutputCallback | None) -> ExecSession:
        # Like Codex, a local process's session id is its pid; other environments get a counter.
        """Register a started process as a session (its pid as id for a local process, as Codex)."""
        pid = process.pid
        if pid is not None and pid.isdigit() and int(pid) not in self._sessions:
            session_id = int(pid)
        else:
            session_id = self._next_id
            self._next_id += 1
        session = ExecSession(session_id, process, on_output)
        self._sessions[session.id] = session
        return session

    def watch(self, session: ExecSession, coro: Coroutine[object, object, None], *, name: str) -> None:
        """Run ``coro`` (which waits for the session to finish) in the background; close() cancels it."""
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._watchers.add(task)
        task.add_done_callback(self._watchers.discard)
        session.watcher = task

    def get(self, session_id: int) -> ExecSession:
        """The open session ``session_id``; raises ``UnknownSession`` when there is none."""
        session = self._sessions.get(session_id)
        if session is None:
            raise UnknownSession(f"Unknown process id {session_id}")
        return session

    @property
    def count(self) -> int:
        """How many sessions are open."""
        return len(self._sessions)

    async def collect(self, session: ExecSession, yield_ms: int, started: float) -> CollectResult:
        """Wait up to ``yield_ms`` for the session to end; its new output (an ended session is closed)."""
        await session.wait_until(time.monotonic() + yield_ms / 1000)
        output = session.take_output()
        if session.finished:
            self._sessions.pop(session.id, None)
            return CollectResult(output, session.exit_code, None, time.monotonic() - started, session.lost)
        return CollectResult(output, None, session.id, time.monotonic() - started)

    async def write(self, session: ExecSession, chars: str) -> None:
        """Send ``chars`` to the session's stdin (nothing when empty: that is a poll)."""
        if chars:
            await session.process.write(chars.encode("utf-8"))

    def running(self) -> list[ExecSession]:
        """Sessions whose process is still running (Codex's "background terminals")."""
        return [s for s in self._sessions.values() if not s.exited.is_set()]

    async def terminate(self, session_id: int) -> bool:
        """Close session ``session_id``, killing its process; False when no such session is open."""
        session = self._sessions.pop(session_id, None)
        if session is None:
            return False
        await session.close()
        return True

    async def close_all(self) -> None:
        """Close every open session (the thread is unloading)."""
        sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            await session.close()
