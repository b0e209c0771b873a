"""Where tools run commands and read files: the ``ExecutionEnvironment`` interface and two homes.

* ``LocalEnvironment`` (``exec_client.local_environment``) spawns real processes in this process.
* ``ExecServerEnvironment`` (here) does the same through an exec-server (``exec_client.client``).

Both yield the same events: ``OutputChunk`` in order, then one ``ProcessExit``, then ``None`` from
``next_event`` once all output was delivered. A missing file is ``FileNotFoundError`` in both.
"""

from __future__ import annotations

import asyncio
import errno
import itertools
import uuid
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from exec_client.wire.errors import NOT_FOUND, ExecServerError

if TYPE_CHECKING:  # a local (stdio app-server) start-up needs neither websockets nor the exec wire models
    from exec_client.client import ExecServerClient, ProcessSubscription

__all__ = [
    "DirEntry",
    "ExecProcess",
    "ExecServerEnvironment",
    "ExecutionEnvironment",
    "FileMetadata",
    "OutputChunk",
    "ProcessEvent",
    "ProcessExit",
    "ProcessSpec",
    "QueuedProcess",
]


@dataclass(frozen=True, slots=True)
class ProcessSpec:
    """What to run: argv, working directory, environment, and whether to use a pty or a stdin pipe."""

    argv: Sequence[str]
    cwd: Path
    #: None: the environment's own variables; a mapping: exactly these variables.
    env: Mapping[str, str] | None = None
    tty: bool = False
    pipe_stdin: bool = False
    arg0: str | None = None


@dataclass(frozen=True, slots=True)
class OutputChunk:
    """Output of a process on one stream (``stdout``, ``stderr`` or ``pty``)."""

    stream: str  # "stdout", "stderr" or "pty"
    data: bytes


@dataclass(frozen=True, slots=True)
class ProcessExit:
    """The process exited; a signal shows as 128+N."""

    exit_code: int  # signals as 128+N


ProcessEvent = OutputChunk | ProcessExit


@dataclass(frozen=True, slots=True)
class DirEntry:
    """One entry of a directory listing."""

    name: str
    is_dir: bool
    is_file: bool


@dataclass(frozen=True, slots=True)
class FileMetadata:
    """What ``metadata`` reports about a path."""

    is_dir: bool
    is_file: bool
    is_symlink: bool
    size: int
    modified_at_ms: int


class ExecProcess(ABC):
    """A process started in an execution environment: its events, stdin and signals."""

    process_id: str
    exit_code: int | None = None

    @abstractmethod
    async def next_event(self, timeout: float | None = None) -> ProcessEvent | None:
        """Next event; None when ``timeout`` passed or the process is closed (see ``is_closed``)."""

    @property
    @abstractmethod
    def is_closed(self) -> bool:
        """Every event of the process was delivered (the exit and all output)."""

    @abstractmethod
    async def write_stdin(self, data: bytes) -> bool:
        """Write ``data`` to stdin; False when the process has no stdin (any more)."""

    @abstractmethod
    async def interrupt(self) -> None:
        """Interrupt the process group (SIGINT)."""

    @abstractmethod
    async def terminate(self) -> bool:
        """Kill the whole process group; True if it was still running."""

    async def events(self, timeout: float) -> AsyncIterator[ProcessEvent]:
        """All remaining events; each wait is bounded by ``timeout`` (TimeoutError when exceeded)."""
        while not self.is_closed:
            event = await self.next_event(timeout)
            if event is None and not self.is_closed:
                raise TimeoutError(f"no event from process {self.process_id} within {timeout}s")
            if event is not None:
                yield event

    async def wait(self, timeout: float) -> int:
        """Drain (and drop) remaining output until the process closes; returns its exit code."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not self.is_closed:
            left = deadline - loop.time()
            if left <= 0:
                raise TimeoutError(f"process {self.process_id} still running after {timeout}s")
            await self.next_event(left)
        assert self.exit_code is not None
        return self.exit_code


class ExecutionEnvironment(ABC):
    """Where tools run processes and read files: this machine (``LocalEnvironment``) or an exec-server.

    Tools see only this interface, so a local run and a remote one take the same path; both report a missing
    file as ``FileNotFoundError``.
    """

    @abstractmethod
    async def start(self, spec: ProcessSpec) -> ExecProcess:
        """Start a process as ``spec`` says."""
    @abstractmethod
    async def read_file(self, path: Path) -> bytes:
        """The bytes of a file (``FileNotFoundError`` if it does not exist)."""
    @abstractmethod
    async def write_file(self, path: Path, data: bytes) -> None:
        """Create or replace a file with ``data``."""
    @abstractmethod
    async def list_dir(self, path: Path) -> list[DirEntry]:
        """The entries of a directory (``FileNotFoundError`` if it does not exist)."""
    @abstractmethod
    async def metadata(self, path: Path) -> FileMetadata:
        """Kind, size and modification time of a path (``FileNotFoundError`` if it does not exist)."""
    @abstractmethod
    async def create_directory(self, path: Path, *, recursive: bool = False) -> None:
        """Create a directory (parents too with ``recursive``)."""
    @abstractmethod
    async def remove(self, path: Path, *, recursive: bool = False, force: bool = False) -> None:
        """Remove a file or, with ``recursive``, a tree; ``force`` ignores a missing path."""
    @abstractmethod
    async def canonicalize(self, path: Path) -> Path:
        """The absolute path with symlinks resolved; FileNotFoundError if it does not exist."""

    @abstractmethod
    async def close(self) -> None:
        """Kill what is still running and release the environment."""


# -- local --------------------------------------------------------------------------------------
def _not_found_as_oserror(exc: ExecServerError, path: Path) -> Exception:
    if exc.code == NOT_FOUND:
        return FileNotFoundError(errno.ENOENT, exc.message, str(path))
    return exc


class QueuedProcess(ExecProcess):
    """An ``ExecProcess`` whose producer puts its events on a queue (``None`` last): ``next_event`` and
    ``is_closed`` for every home that pumps output itself (the local one, an editor's terminal)."""

    def __init__(self, process_id: str, *, maxsize: int = 0) -> None:
        self.process_id = process_id
        #: Bounded (``maxsize``) where the producer should feel backpressure.
        self._events: asyncio.Queue[ProcessEvent | None] = asyncio.Queue(maxsize)
        self._closed = False

    @property
    def is_closed(self) -> bool:
        """The producer's ``None`` was taken: every event was delivered."""
        return self._closed

    async def next_event(self, timeout: float | None = None) -> ProcessEvent | None:
        """The next queued event (an exit sets ``exit_code``); None after ``timeout`` or once closed."""
        if self._closed:
            return None
        try:
            event = await asyncio.wait_for(self._events.get(), timeout)
        except TimeoutError:
            return None
        if event is None:
            self._closed = True
        elif isinstance(event, ProcessExit):
            self.exit_code = event.exit_code
        return event


@dataclass
class _RemoteProcess(ExecProcess):
    client: ExecServerClient
    process_id: str
    sub: ProcessSubscription
    exit_code: int | None = None
    _closed: bool = field(default=False)
    _close_next: bool = field(default=False)

    @property
    def is_closed(self) -> bool:
        return self._closed

    async def next_event(self, timeout: float | None = None) -> ProcessEvent | None:
        if self._close_next:
            self._finish()
        if self._closed:
            return None
        from exec_client.wire import protocol as p

        event = await self.sub.next(timeout)
        if isinstance(event, p.ProcessOutput):
            return OutputChunk(event.stream, event.data)
        if isinstance(event, p.ProcessExited):
            self.exit_code = event.exit_code
            return ProcessExit(event.exit_code)
        if isinstance(event, p.ProcessClosed):
            if self.exit_code is None:
                # Seen from Codex under load: the close overtook the exit. The log has the code.
                code = await self._exit_code_from_log(event.seq)
                if code is not None:
                    self.exit_code = code
                    self._close_next = True
                    return ProcessExit(code)
            self._finish()
        return None

    def _finish(self) -> None:
        self._closed = True
        self._close_next = False
        self.client.unsubscribe(self.process_id)

    async def _exit_code_from_log(self, after_seq: int) -> int | None:
        for _ in range(20):
            read = await self.client.read_process(self.process_id, after_seq=after_seq, wait_ms=100)
            if read.exited:
                return read.exit_code
        return None

    async def write_stdin(self, data: bytes) -> bool:
        return await self.client.write_process(self.process_id, data) == "accepted"

    async def interrupt(self) -> None:
        await self.client.interrupt_process(self.process_id)

    async def terminate(self) -> bool:
        return await self.client.terminate_process(self.process_id)


class ExecServerEnvironment(ExecutionEnvironment):
    """Runs everything through an initialized ``ExecServerClient`` (which it then owns)."""

    def __init__(self, client: ExecServerClient) -> None:
        self.client = client
        self._ids = itertools.count(1)

    async def start(self, spec: ProcessSpec) -> ExecProcess:
        """Start ``spec`` as ``process/start`` under a fresh ``<n>-<uuid>`` process id."""
        # Like the app-server: "<n>-<uuid>", unique across reconnects of one session.
        process_id = f"{next(self._ids)}-{uuid.uuid4()}"
        policy = None
        if spec.env is None:  # inherit the executor's own environment, as the app-server does
            policy = {
                "inherit": "all",
                "ignoreDefaultExcludes": True,
                "exclude": [],
                "set": {},
                "includeOnly": [],
            }
        sub = await self.client.start_process(
            process_id, list(spec.argv), spec.cwd, dict(spec.env or {}),
            tty=spec.tty, pipe_stdin=spec.pipe_stdin, arg0=spec.arg0, env_policy=policy,
        )  # fmt: skip
        return _RemoteProcess(self.client, process_id, sub)

    async def read_file(self, path: Path) -> bytes:
        """``fs/readFile``, with the server's not-found error as ``FileNotFoundError``."""
        try:
            return await self.client.read_file(path)
        except ExecServerError as exc:
            raise _not_found_as_oserror(exc, path) from exc

    async def write_file(self, path: Path, data: bytes) -> None:
        """``fs/writeFile``."""
        await self.client.write_file(path, data)

    async def list_dir(self, path: Path) -> list[DirEntry]:
        """``fs/readDirectory``, with the server's not-found error as ``FileNotFoundError``."""
        try:
            entries = await self.client.read_directory(path)
        except ExecServerError as exc:
            raise _not_found_as_oserror(exc, path) from exc
        return [DirEntry(e.file_name, e.is_directory, e.is_file) for e in entries]

    async def metadata(self, path: Path) -> FileMetadata:
        """``fs/getMetadata``, with the server's not-found error as ``FileNotFoundError``."""
        try:
            m = await self.client.get_metadata(path)
        except ExecServerError as exc:
            raise _not_found_as_oserror(exc, path) from exc
        return FileMetadata(m.is_directory, m.is_file, m.is_symlink, m.size, m.modified_at_ms)

    async def create_directory(self, path: Path, *, recursive: bool = False) -> None:
        """``fs/createDirectory``."""
        await self.client.create_directory(path, recursive=recursive)

    async def remove(self, path: Path, *, recursive: bool = False, force: bool = False) -> None:
        """``fs/remove``, with the server's not-found error as ``FileNotFoundError``."""
        try:
            await self.client.remove(path, recursive=recursive, force=force)
        except ExecServerError as exc:
            raise _not_found_as_oserror(exc, path) from exc

    async def canonicalize(self, path: Path) -> Path:
        """``fs/canonicalize``, with the server's not-found error as ``FileNotFoundError``."""
        try:
            return await self.client.canonicalize(path)
        except ExecServerError as exc:
            raise _not_found_as_oserror(exc, path) from exc

    async def close(self) -> None:
        """Close the connection to the exec-server (its session stays resumable there)."""
        await self.client.close()
