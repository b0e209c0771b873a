"""The in-process execution environment: real child processes of this process, no sockets.

Each child runs in its own session/process group with pipes or a pty; output is pulled in chunks of
at most 8192 bytes and delivered as the ``ExecProcess`` events of ``exec_client.environment``.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import os
import shutil
import signal
import termios
from pathlib import Path

from exec_client.environment import (
    DirEntry,
    ExecProcess,
    ExecutionEnvironment,
    FileMetadata,
    OutputChunk,
    ProcessEvent,
    ProcessExit,
    ProcessSpec,
)
from exec_client.wire import protocol as p

__all__ = ["LocalEnvironment"]


class _LocalProcess(ExecProcess):
    def __init__(self, process_id: str, proc: asyncio.subprocess.Process, pty_master: int | None) -> None:
        self.process_id = process_id
        self._proc = proc
        self._master = pty_master
        self._events: asyncio.Queue[ProcessEvent | None] = asyncio.Queue(64)  # bounded: backpressure
        self._closed = False
        self._task = asyncio.create_task(self._run())

    @property
    def is_closed(self) -> bool:
        return self._closed

    async def _pump(self, stream: str, reader: asyncio.StreamReader) -> None:
        while True:
            try:
                data = await reader.read(p.MAX_CHUNK_BYTES)
            except OSError as exc:  # a pty reports EIO once the last writer is gone
                if exc.errno != errno.EIO:
                    raise
                data = b""
            if not data:
                return
            await self._events.put(OutputChunk(stream, data))

    async def _run(self) -> None:
        readers: list[tuple[str, asyncio.StreamReader]] = []
        transport: asyncio.ReadTransport | None = None
        if self._master is not None:
            loop = asyncio.get_running_loop()
            reader = asyncio.StreamReader(limit=65536)
            pipe = os.fdopen(os.dup(self._master), "rb", buffering=0)
            transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
            readers.append(("pty", reader))
        else:
            assert self._proc.stdout is not None and self._proc.stderr is not None
            readers += [("stdout", self._proc.stdout), ("stderr", self._proc.stderr)]
        pumps = [asyncio.create_task(self._pump(name, r)) for name, r in readers]
        try:
            code = await _wait_leader(self._proc)
            await asyncio.wait(pumps, timeout=0.1)
            if transport is not None:
                transport.close()  # background children may hold the terminal open forever
            await self._events.put(ProcessExit(code))
            await asyncio.gather(*pumps, return_exceptions=True)
        finally:
            for pump in pumps:
                pump.cancel()
            if self._master is not None:
                with contextlib.suppress(OSError):
                    os.close(self._master)
                self._master = None
            await self._events.put(None)

    async def next_event(self, timeout: float | None = None) -> ProcessEvent | None:
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

    async def write_stdin(self, data: bytes) -> bool:
        if self._master is not None:
            try:
                await asyncio.to_thread(os.write, self._master, data)
            except OSError:
                return False
            return True
        stdin = self._proc.stdin
        if stdin is None or stdin.is_closing():
            return False
        try:
            stdin.write(data)
            await stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            return False
        return True

    def _signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, sig)

    async def interrupt(self) -> None:
        self._signal(signal.SIGINT)

    async def terminate(self) -> bool:
        running = self._proc.returncode is None
        if not self._task.done():
            self._signal(signal.SIGKILL)
        return running


async def _wait_leader(proc: asyncio.subprocess.Process) -> int:
    """Exit code of the leader without waiting for its pipes (asyncio's wait() does, and background
    children can hold them open forever). A pidfd says when it exits; the child watcher reaps it."""
    loop = asyncio.get_running_loop()
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (OSError, AttributeError):
        pidfd = None
    if pidfd is not None:
        exited: asyncio.Future[None] = loop.create_future()

        def on_exit() -> None:
            if not exited.done():
                exited.set_result(None)

        loop.add_reader(pidfd, on_exit)
        try:
            await exited
        finally:
            loop.remove_reader(pidfd)
            os.close(pidfd)
    for _ in range(1_000_000):  # the watcher records the status right after the exit
        if proc.returncode is not None:
            rc = proc.returncode
            return 128 - rc if rc < 0 else rc
        await asyncio.sleep(0.002)
    return await proc.wait()


def _controlling_tty() -> None:
    with contextlib.suppress(OSError):
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class LocalEnvironment(ExecutionEnvironment):
    def __init__(self) -> None:
        self._procs: list[_LocalProcess] = []

    async def start(self, spec: ProcessSpec) -> ExecProcess:
        if not spec.argv:
            raise ValueError("argv must not be empty")
        program, *rest = spec.argv
        args = [spec.arg0 if spec.arg0 is not None else program, *rest]
        env = dict(os.environ) if spec.env is None else dict(spec.env)
        master: int | None = None
        if spec.tty:
            master, slave = os.openpty()
            try:
                proc = await asyncio.create_subprocess_exec(
                    *args, executable=program, stdin=slave, stdout=slave, stderr=slave,
                    cwd=spec.cwd, env=env, start_new_session=True, preexec_fn=_controlling_tty,
                )  # fmt: skip
            except BaseException:
                os.close(master)
                raise
            finally:
                os.close(slave)
        else:
            stdin = asyncio.subprocess.PIPE if spec.pipe_stdin else asyncio.subprocess.DEVNULL
            proc = await asyncio.create_subprocess_exec(
                *args, executable=program, stdin=stdin, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, cwd=spec.cwd, env=env, start_new_session=True,
            )  # fmt: skip
        # The OS pid, as Codex reports local processes (commandExecution.processId).
        handle = _LocalProcess(str(proc.pid), proc, master)
        self._procs = [x for x in self._procs if not x.is_closed] + [handle]
        return handle

    async def read_file(self, path: Path) -> bytes:
        return await asyncio.to_thread(path.read_bytes)

    async def write_file(self, path: Path, data: bytes) -> None:
        await asyncio.to_thread(path.write_bytes, data)

    async def list_dir(self, path: Path) -> list[DirEntry]:
        def work() -> list[DirEntry]:
            with os.scandir(path) as it:
                return sorted((DirEntry(e.name, e.is_dir(), e.is_file()) for e in it), key=lambda e: e.name)

        return await asyncio.to_thread(work)

    async def metadata(self, path: Path) -> FileMetadata:
        def work() -> FileMetadata:
            is_link = path.is_symlink()
            st = path.stat()
            return FileMetadata(path.is_dir(), path.is_file(), is_link, st.st_size, int(st.st_mtime * 1000))

        return await asyncio.to_thread(work)

    async def create_directory(self, path: Path, *, recursive: bool = False) -> None:
        await asyncio.to_thread(path.mkdir, parents=recursive, exist_ok=recursive)

    async def remove(self, path: Path, *, recursive: bool = False, force: bool = False) -> None:
        def work() -> None:
            try:
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path) if recursive else path.rmdir()
                else:
                    path.unlink()
            except FileNotFoundError:
                if not force:
                    raise

        await asyncio.to_thread(work)

    async def canonicalize(self, path: Path) -> Path:
        return await asyncio.to_thread(path.resolve, strict=True)

    async def close(self) -> None:
        for proc in self._procs:
            await proc.terminate()
        self._procs = []


# -- over an exec-server ------------------------------------------------------------------------
