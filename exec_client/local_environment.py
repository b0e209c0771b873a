"""The in-process execution environment: real child processes of this process, no sockets.

Each child runs in its own session/process group with pipes or a pty (``pycodex.platform.spawn``, the
exec-server's spawning code too); output is pulled in chunks of at most 8192 bytes and delivered as the
``ExecProcess`` events of ``exec_client.environment``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
from pathlib import Path

from exec_client.environment import (
    DirEntry,
    ExecProcess,
    ExecutionEnvironment,
    FileMetadata,
    OutputChunk,
    ProcessExit,
    ProcessSpec,
    QueuedProcess,
)
from exec_client.wire import MAX_CHUNK_BYTES
from pycodex.platform.spawn import SpawnedProcess, SpawnError, SpawnRequest, spawn

__all__ = ["LocalEnvironment", "remove_path"]


class _LocalProcess(QueuedProcess):
    def __init__(self, process_id: str, spawned: SpawnedProcess) -> None:
        super().__init__(process_id, maxsize=64)  # bounded: the pumps feel backpressure
        self._spawned = spawned
        self._task = asyncio.create_task(self._run())

    async def _pump(self, stream: str) -> None:
        while data := await self._spawned.read_chunk(stream, MAX_CHUNK_BYTES):
            await self._events.put(OutputChunk(stream, data))

    async def _run(self) -> None:
        pumps = [asyncio.create_task(self._pump(name)) for name in self._spawned.streams]
        try:
            code = await self._spawned.wait()
            await asyncio.wait(pumps, timeout=0.1)
            self._spawned.close_pty()  # background children may hold the terminal open forever
            await self._events.put(ProcessExit(code))
            await asyncio.gather(*pumps, return_exceptions=True)
        finally:
            for pump in pumps:
                pump.cancel()
            self._spawned.close_pty()
            await self._events.put(None)

    async def write_stdin(self, data: bytes) -> bool:
        return await self._spawned.write_stdin(data)

    async def interrupt(self) -> None:
        self._spawned.signal_group(signal.SIGINT)

    async def terminate(self) -> bool:
        running = self._spawned.returncode is None
        if not self._task.done():
            self._spawned.signal_group(signal.SIGKILL)
        return running



def remove_path(path: Path, *, recursive: bool, force: bool) -> None:
    """Remove a file, a link or a directory (its tree with ``recursive``); ``force`` ignores a missing path.

    Blocking: call it in a worker thread. A link to a directory is removed as a link, never followed.
    """
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path) if recursive else path.rmdir()
        else:
            path.unlink()
    except FileNotFoundError:
        if not force:
            raise

class LocalEnvironment(ExecutionEnvironment):
    """The environment of this machine: processes spawned here, files read and written directly."""

    def __init__(self) -> None:
        self._procs: list[_LocalProcess] = []

    async def start(self, spec: ProcessSpec) -> ExecProcess:
        """Spawn ``spec`` in its own process group (``ValueError`` for an empty argv)."""
        if not spec.argv:
            raise ValueError("argv must not be empty")
        env = dict(os.environ) if spec.env is None else dict(spec.env)
        request = SpawnRequest(
            list(spec.argv), spec.cwd, env, tty=spec.tty, pipe_stdin=spec.pipe_stdin, arg0=spec.arg0
        )
        try:
            spawned = await spawn(request)
        except SpawnError as exc:
            # Callers of an environment expect the OSError (FileNotFoundError, ...) a local start raises.
            if isinstance(exc.__cause__, OSError):
                raise exc.__cause__ from None
            raise
        # The OS pid, as Codex reports local processes (commandExecution.processId).
        handle = _LocalProcess(str(spawned.pid), spawned)
        self._procs = [x for x in self._procs if not x.is_closed] + [handle]
        return handle

    async def read_file(self, path: Path) -> bytes:
        """Read the file in a worker thread."""
        return await asyncio.to_thread(path.read_bytes)

    async def write_file(self, path: Path, data: bytes) -> None:
        """Write the file in a worker thread."""
        await asyncio.to_thread(path.write_bytes, data)

    async def list_dir(self, path: Path) -> list[DirEntry]:
        """The directory's entries, sorted by name."""
        def work() -> list[DirEntry]:
            with os.scandir(path) as it:
                return sorted((DirEntry(e.name, e.is_dir(), e.is_file()) for e in it), key=lambda e: e.name)

        return await asyncio.to_thread(work)

    async def metadata(self, path: Path) -> FileMetadata:
        """The path's metadata (``stat`` follows symlinks; ``is_symlink`` says whether it is one)."""
        def work() -> FileMetadata:
            is_link = path.is_symlink()
            st = path.stat()
            return FileMetadata(path.is_dir(), path.is_file(), is_link, st.st_size, int(st.st_mtime * 1000))

        return await asyncio.to_thread(work)

    async def create_directory(self, path: Path, *, recursive: bool = False) -> None:
        """``mkdir``; with ``recursive`` parents are made and an existing directory is fine."""
        await asyncio.to_thread(path.mkdir, parents=recursive, exist_ok=recursive)

    async def remove(self, path: Path, *, recursive: bool = False, force: bool = False) -> None:
        """Remove a file or, with ``recursive``, a tree; ``force`` ignores a missing path."""
        await asyncio.to_thread(remove_path, path, recursive=recursive, force=force)

    async def canonicalize(self, path: Path) -> Path:
        """The path with symlinks resolved (``FileNotFoundError`` if it does not exist)."""
        return await asyncio.to_thread(path.resolve, strict=True)

    async def close(self) -> None:
        """Terminate every process this environment started."""
        for proc in self._procs:
            await proc.terminate()
        self._procs = []


# -- over an exec-server ------------------------------------------------------------------------
