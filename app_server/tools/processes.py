"""The process contract the exec tools run on, over any ``ExecutionEnvironment``.

``EnvironmentSpawner`` adapts an environment (in-process local, an exec-server over WebSocket, or a
remote one behind the relay) to what the unified exec sessions need: a byte stream of output, stdin,
the exit code and a tree kill. Every tool therefore has one code path whatever runs the command.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

from exec_client.environment import ExecProcess as EnvProcess
from exec_client.environment import ExecutionEnvironment, OutputChunk, ProcessExit, ProcessSpec

__all__ = ["EnvironmentSpawner", "ExecProcess", "ProcessLost", "SpawnError", "Spawner"]


class SpawnError(Exception):
    """The command could not be started (missing cwd, no such program, environment unavailable)."""


class ProcessLost(Exception):
    """The environment stopped reporting on a started process (its exec-server went away): it has no
    exit code to give, and whether it still runs there is unknown."""


class ExecProcess(Protocol):
    """A running command as the exec tools see it: a byte stream both ways and an exit code."""

    @property
    def pid(self) -> str | None:
        """The process id where the environment has one (a local pid becomes the session id)."""

    async def read(self) -> bytes:
        """The next chunk of output; ``b""`` once the output is closed."""

    async def write(self, data: bytes) -> None:
        """Write ``data`` to the process's stdin."""

    async def wait(self) -> int:
        """Wait for the process to exit; returns its exit code (``ProcessLost`` when that cannot be known)."""

    @property
    def exit_code(self) -> int | None:
        """The exit code once the process has exited, else None."""

    async def kill(self) -> None:
        """Kill the whole process tree; safe to call more than once."""


class Spawner(Protocol):
    """Starts commands where a thread's tools run (``EnvironmentSpawner`` over an execution environment)."""

    async def spawn(
        self, argv: Sequence[str], *, cwd: str, env: Mapping[str, str] | None, tty: bool
    ) -> ExecProcess:
        """Start ``argv`` in ``cwd`` (with a tty when asked); raises ``SpawnError`` when it cannot start."""


class _Adapted:
    """One environment process seen as a byte stream plus an exit code."""

    def __init__(self, process: EnvProcess) -> None:
        self._process = process
        self._exit: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    @property
    def pid(self) -> str | None:
        return self._process.process_id

    @property
    def exit_code(self) -> int | None:
        return self._exit.result() if self._exit.done() else None

    async def read(self) -> bytes:
        while True:
            try:
                event = await self._process.next_event(None)
            except Exception as exc:  # the exec-server's connection is gone: no exit code will come
                if not self._exit.done():
                    self._exit.set_exception(ProcessLost(str(exc) or type(exc).__name__))
                return b""
            if isinstance(event, OutputChunk):
                return event.data
            if isinstance(event, ProcessExit):
                if not self._exit.done():
                    self._exit.set_result(event.exit_code)
                continue
            if self._process.is_closed:
                if not self._exit.done() and self._process.exit_code is not None:
                    self._exit.set_result(self._process.exit_code)
                return b""

    async def write(self, data: bytes) -> None:
        if not await self._process.write_stdin(data):
            raise BrokenPipeError("the process no longer accepts input")

    async def wait(self) -> int:
        return await asyncio.shield(self._exit)

    async def kill(self) -> None:
        with contextlib.suppress(Exception):
            await self._process.terminate()


class EnvironmentSpawner:
    """Starts commands in an ``ExecutionEnvironment``."""

    def __init__(self, environment: ExecutionEnvironment) -> None:
        self.environment = environment

    async def spawn(
        self, argv: Sequence[str], *, cwd: str, env: Mapping[str, str] | None, tty: bool
    ) -> ExecProcess:
        """Start ``argv`` through the environment; raises ``SpawnError`` when it cannot start."""
        spec = ProcessSpec(argv=list(argv), cwd=Path(cwd), env=env, tty=tty, pipe_stdin=True)
        try:
            process = await self.environment.start(spec)
        except (OSError, ValueError) as exc:
            raise SpawnError(f"failed to start {argv[0] if argv else 'command'}: {exc}") from None
        except Exception as exc:  # the exec-server refused or went away
            raise SpawnError(str(exc)) from None
        return _Adapted(process)
