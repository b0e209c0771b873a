"""Sessions own the process table; the registry attaches, detaches, resumes and expires them.

A session outlives its connection (as in Codex): when the connection ends the session is *detached*,
its processes keep running and their output is buffered, and a new connection may resume it with
``initialize{resumeSessionId}``. A detached session that nobody resumes within ``detached_ttl_s`` is
ended and its process groups are killed. While detached, a process may buffer at most
``detached_buffer_bytes`` of new output; beyond that its pump waits (the child blocks on its pipe).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass

from exec_client.wire.errors import SessionAlreadyAttached
from exec_server.fs_extra import FileHandles, Watches
from exec_server.heap import release_free_heap
from exec_server.output_log import DEFAULT_RETAIN_BYTES, DEFAULT_SESSION_RETAIN_BYTES, RetentionBudget
from exec_server.processes import ManagedProcess, ProcessState
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InvalidRequest
from pycodex.platform.spawn import SpawnedProcess

__all__ = [
    "DEFAULT_DETACHED_TTL_S",
    "DEFAULT_MAX_PROCESSES",
    "Limits",
    "Notify",
    "SendEncoded",
    "Session",
    "SessionRegistry",
]

#: Send one notification to the attached connection (may block: that is the backpressure).
Notify = Callable[[str, JsonObj], Awaitable[None]]
#: Send already encoded messages at once (the output fast path: no dict, no JSON encoder per chunk,
#: one socket write per pipe read).
SendEncoded = Callable[[Sequence[bytes]], Awaitable[None]]


#: Running processes per session. Codex 0.169's exec-server has no cap of its own (its app-server keeps each
#: thread to 64 unified-exec sessions, as pycodex's does); this one only stops a runaway client from
#: exhausting the machine's process table, well above what several threads can run at once.
DEFAULT_MAX_PROCESSES = 1024
DEFAULT_DETACHED_TTL_S = 300.0


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-session limits: processes, retained output, detached buffering and expiry."""

    max_processes: int = DEFAULT_MAX_PROCESSES
    retain_bytes: int = DEFAULT_RETAIN_BYTES
    #: Output retained by all of a session's processes together (finished ones give way first).
    session_retain_bytes: int = DEFAULT_SESSION_RETAIN_BYTES
    detached_buffer_bytes: int = 4 * 1024 * 1024
    detached_ttl_s: float = DEFAULT_DETACHED_TTL_S
    max_finished_kept: int = 1024
    #: A start whose sandbox policy cannot be applied is refused unless this is set.
    allow_unsandboxed: bool = False


class Session:
    """A session: its processes, file handles and watches; it outlives the connection attached to it."""

    def __init__(self, session_id: str, limits: Limits) -> None:
        self.id = session_id
        self.limits = limits
        self.processes: dict[str, ManagedProcess] = {}
        self._notify: Notify | None = None
        self._send_encoded: SendEncoded | None = None
        self.connection_token: object | None = None
        self._attached = asyncio.Event()
        self._detached_bytes = 0
        self._emit_lock = asyncio.Lock()
        self.retention = RetentionBudget(limits.session_retain_bytes)
        self.files = FileHandles()
        self.watches = Watches()
        self._background: set[asyncio.Task[None]] = set()

    @property
    def attached(self) -> bool:
        """A connection is attached (notifications go out rather than being buffered)."""
        return self._notify is not None

    def attach(self, notify: Notify, token: object, send_encoded: SendEncoded | None = None) -> None:
        """Attach the connection identified by ``token``; its ``notify`` receives notifications from now
        on."""
        self._notify = notify
        self._send_encoded = send_encoded
        self.connection_token = token
        self._detached_bytes = 0
        self._attached.set()

    def detach(self) -> None:
        """The connection left: output is buffered (bounded) until another attaches."""
        self._notify = None
        self._send_encoded = None
        self.connection_token = None
        self._attached.clear()

    async def _deliver(self, method: str, params: JsonObj, nbytes: int) -> None:
        if self._notify is not None:
            try:
                await self._notify(method, params)
            except ConnectionError:
                pass  # the connection is going away; the event stays in the log for a resume
            return
        await self._held(nbytes)

    async def _deliver_encoded(self, messages: Sequence[bytes], nbytes: int) -> None:
        """Deliver notifications encoded by the caller (byte-identical to what ``notify`` sends)."""
        if self._send_encoded is None and self._notify is not None:
            for message in messages:  # a connection without the fast path
                decoded = json.loads(message)
                await self._deliver(decoded["method"], decoded["params"], 0)
            return
        if self._send_encoded is not None:
            try:
                await self._send_encoded(messages)
            except ConnectionError:
                pass  # as in _deliver: a resume reads it from the log
            return
        await self._held(nbytes)

    async def _held(self, nbytes: int) -> None:
        """Detached: the output stays in the log; past the buffer bound the pump waits for a resume."""
        self._detached_bytes += nbytes
        if self._detached_bytes > self.limits.detached_buffer_bytes:
            await self._attached.wait()  # ends on resume, or by cancellation at expiry

    def run_in_background(self, work: Coroutine[object, object, None]) -> None:
        """Session-owned work (e.g. streaming an HTTP body); cancelled when the session ends."""
        task = asyncio.create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def notify(self, method: str, params: JsonObj) -> None:
        """A session-level notification (not part of a process's sequence)."""
        await self._deliver(method, params, 0)

    def running_count(self) -> int:
        """How many processes of the session are still running."""
        return sum(1 for p in self.processes.values() if p.state is ProcessState.RUNNING)

    def check_capacity(self, process_id: str) -> None:
        """Refuse a start (-32600) for a duplicate id or beyond the per-session process limit."""
        if process_id in self.processes:
            raise InvalidRequest(f"process {process_id} already exists")
        if self.running_count() >= self.limits.max_processes:
            raise InvalidRequest(
                f"too many running processes: the limit is {self.limits.max_processes} per session; "
                "terminate one before starting another"
            )

    def add(self, process_id: str, spawned: SpawnedProcess, tty: bool) -> ManagedProcess:
        """Register and start a spawned process under ``process_id``."""
        proc = ManagedProcess(
            process_id,
            spawned,
            tty=tty,
            deliver=self._deliver,
            deliver_encoded=self._deliver_encoded,
            emit_lock=self._emit_lock,
            retain_bytes=self.limits.retain_bytes,
            budget=self.retention,
        )
        self.processes[process_id] = proc
        self._evict_finished()
        proc.start()
        return proc

    def _evict_finished(self) -> None:
        closed = [pid for pid, p in self.processes.items() if p.state is ProcessState.CLOSED]
        for pid in closed[: max(0, len(closed) - self.limits.max_finished_kept)]:
            self.processes.pop(pid).log.forget()

    def get(self, process_id: str) -> ManagedProcess:
        """The process with this id (-32600 if unknown)."""
        proc = self.processes.get(process_id)
        if proc is None:
            raise InvalidRequest(f"unknown process id {process_id}")
        return proc

    async def shutdown(self) -> None:
        """End the session: cancel its work, close its handles and kill its processes."""
        for task in list(self._background):
            task.cancel()
        self.watches.cancel_all()
        self.files.close_all()
        await asyncio.gather(*(p.kill_and_forget() for p in self.processes.values()))
        # Nothing of an ended session can be read again: unmap its output now, whoever still
        # holds a reference to the session.
        for proc in self.processes.values():
            proc.log.forget()
        self.processes.clear()
        self.retention.pages.clear()


class SessionRegistry:
    """Every session of the server: attaches, detaches, resumes and expires them."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self._sessions: dict[str, Session] = {}
        self._expiry: dict[str, asyncio.Task[None]] = {}

    def attach(
        self,
        resume_session_id: str | None,
        notify: Notify,
        token: object,
        send_encoded: SendEncoded | None = None,
    ) -> Session:
        """Attach a connection to a new session, or resume ``resume_session_id`` (refused if unknown or
        attached elsewhere)."""
        if resume_session_id is None:
            session = Session(str(uuid.uuid4()), self.limits)
            self._sessions[session.id] = session
        else:
            found = self._sessions.get(resume_session_id)
            if found is None:
                raise InvalidRequest(f"unknown session id {resume_session_id}")
            if found.attached:
                raise SessionAlreadyAttached(
                    f"session {resume_session_id} is already attached to another connection"
                )
            session = found
            timer = self._expiry.pop(session.id, None)
            if timer is not None:
                timer.cancel()
        session.attach(notify, token, send_encoded)
        return session

    def detach(self, session: Session, token: object) -> None:
        """Detach ``token``'s connection (unless another took over) and start the expiry timer."""
        if session.connection_token is not token:
            return  # already taken over by another connection
        session.detach()
        self._expiry[session.id] = asyncio.create_task(self._expire(session))

    async def _expire(self, session: Session) -> None:
        await asyncio.sleep(self.limits.detached_ttl_s)
        if session.attached:
            return
        self._expiry.pop(session.id, None)
        self._sessions.pop(session.id, None)
        await session.shutdown()
        release_free_heap()  # its output is gone: let RSS return to the baseline

    async def shutdown(self) -> None:
        """End every session (server shutdown)."""
        for timer in self._expiry.values():
            timer.cancel()
        self._expiry.clear()
        sessions, self._sessions = list(self._sessions.values()), {}
        with contextlib.suppress(Exception):
            await asyncio.gather(*(s.shutdown() for s in sessions))
