"""The process contract the exec tools run on, and its in-process local implementation.

``Spawner.spawn`` starts a command and returns an ``ExecProcess``: a byte stream of combined output,
stdin, the exit code and a tree kill. The app-server's environments (local, exec-server, remote) all
offer this contract, so ``exec_command`` has one code path whatever runs the command.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pty
import signal
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

__all__ = ["ExecProcess", "LocalSpawner", "SpawnError", "Spawner"]

_READ_CHUNK = 64 * 1024


class SpawnError(Exception):
    """The command could not be started (missing cwd, no such program, environment unavailable)."""


class ExecProcess(Protocol):
    @property
    def pid(self) -> str | None: ...

    async def read(self) -> bytes:
        """The next chunk of output; ``b""`` once the output is closed."""

    async def write(self, data: bytes) -> None: ...

    async def wait(self) -> int: ...

    @property
    def exit_code(self) -> int | None: ...

    async def kill(self) -> None:
        """Kill the whole process tree; safe to call more than once."""


class Spawner(Protocol):
    async def spawn(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str] | None,
        tty: bool,
        preexec: Callable[[], None] | None = None,
    ) -> ExecProcess: ...


class _LocalProcess:
    def __init__(self, proc: asyncio.subprocess.Process, master_fd: int | None) -> None:
        self._proc = proc
        self._master = master_fd
        self._reader: asyncio.StreamReader | None = proc.stdout
        self._pty_reader: asyncio.StreamReader | None = None

    @property
    def pid(self) -> str | None:
        return str(self._proc.pid)

    @property
    def exit_code(self) -> int | None:
        return self._proc.returncode

    async def _open_pty_reader(self) -> asyncio.StreamReader:
        if self._pty_reader is None:
            assert self._master is not None
            loop = asyncio.get_running_loop()
            reader = asyncio.StreamReader()
            # A dup keeps the master open for writes after the read transport closes it.
            await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(os.dup(self._master), "rb", 0)
            )
            self._pty_reader = reader
        return self._pty_reader

    async def read(self) -> bytes:
        reader = await self._open_pty_reader() if self._master is not None else self._reader
        if reader is None:
            return b""
        try:
            return await reader.read(_READ_CHUNK)
        except OSError:  # EIO on a pty whose slave side closed: the output is over
            return b""

    async def write(self, data: bytes) -> None:
        if self._master is not None:
            await asyncio.to_thread(os.write, self._master, data)
            return
        stdin = self._proc.stdin
        if stdin is None or stdin.is_closing():
            raise BrokenPipeError("stdin is closed")
        stdin.write(data)
        await stdin.drain()

    async def wait(self) -> int:
        return await self._proc.wait()

    async def kill(self) -> None:
        if self._proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._proc.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                self._proc.kill()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._proc.wait(), 5)
        if self._master is not None:
            with contextlib.suppress(OSError):
                os.close(self._master)
            self._master = None


class LocalSpawner:
    """Runs commands as children of this process, each in its own process group."""

    async def spawn(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str] | None,
        tty: bool,
        preexec: Callable[[], None] | None = None,
    ) -> ExecProcess:
        if not os.path.isdir(cwd):
            raise SpawnError(f"working directory does not exist: {cwd}")
        master: int | None = None
        try:
            if tty:
                master, slave = pty.openpty()
                proc = await asyncio.create_subprocess_exec(
                    *argv, stdin=slave, stdout=slave, stderr=slave, cwd=cwd,
                    env=dict(env) if env is not None else None, start_new_session=True, preexec_fn=preexec,
                )
                os.close(slave)
            else:
                proc = await asyncio.create_subprocess_exec(
                    *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.STDOUT, cwd=cwd, env=dict(env) if env is not None else None,
                    start_new_session=True, preexec_fn=preexec,
                )
        except (OSError, ValueError) as exc:
            if master is not None:
                os.close(master)
            raise SpawnError(f"failed to start {argv[0] if argv else 'command'}: {exc}") from None
        return _LocalProcess(proc, master)
