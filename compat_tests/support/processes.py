"""Black-box processes for the compat harness: spawn, talk over pipes, stop by PID, keep a result record.

A :class:`ProcessHandle` drains stderr (and stdout unless the test reads it as a protocol) into lines
and, once stopped, holds a :class:`ProcessResult` with the exit code, stdout lines, stderr lines and
duration, as pytester's ``RunResult`` does. A :class:`ProcessGroup` owns the handles of one test and
stops them in reverse start order, each by its PID. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["STOP_TIMEOUT", "ProcessGroup", "ProcessHandle", "ProcessResult", "clean_env"]

STOP_TIMEOUT = 10.0
_STDIN_GRACE = 3.0
_LINE_LIMIT = 16 * 1024 * 1024


@dataclass(frozen=True)
class ProcessResult:
    returncode: int | None
    stdout_lines: list[str]
    stderr_lines: list[str]
    duration: float

    def tail(self, count: int = 40) -> str:
        """The last stderr lines, for assertion messages."""
        return "\n".join(self.stderr_lines[-count:])


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without CODEX_*/OPENAI_*/PYCODEX_RELAY_* values (no real key leaks in), plus ``extra``."""
    prefixes = ("CODEX_", "OPENAI_", "PYCODEX_RELAY_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    env["RUST_LOG"] = "warn"
    return env | extra


class ProcessHandle:
    """One started process. ``protocol_stdout`` leaves stdout to the caller (:meth:`readline`)."""

    def __init__(self, name: str, proc: asyncio.subprocess.Process, *, protocol_stdout: bool) -> None:
        self.name = name
        self.proc = proc
        self.stdout_lines: list[str] = []
        self.stderr_lines: list[str] = []
        self.result: ProcessResult | None = None
        self._started = time.monotonic()
        self._drains = [asyncio.create_task(self._drain(proc.stderr, self.stderr_lines))]
        if not protocol_stdout:
            self._drains.append(asyncio.create_task(self._drain(proc.stdout, self.stdout_lines)))

    @classmethod
    async def start(
        cls,
        name: str,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: Path,
        protocol_stdout: bool = False,
        stdin: bool = False,
    ) -> ProcessHandle:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            env=dict(env),
            cwd=str(cwd),
            stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=_LINE_LIMIT,
        )
        return cls(name, proc, protocol_stdout=protocol_stdout)

    @property
    def pid(self) -> int:
        return self.proc.pid

    async def readline(self, timeout: float) -> str:
        """One stdout line (protocol mode); raises if the process closed stdout."""
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), timeout)
        if not line:
            raise AssertionError(f"{self.name} closed stdout (exit {self.proc.returncode}):\n{self._tail()}")
        return line.decode("utf-8", "replace").rstrip("\n")

    async def write_line(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        await asyncio.wait_for(self.proc.stdin.drain(), STOP_TIMEOUT)

    async def stop(self) -> ProcessResult:
        """Close stdin, then SIGTERM to this PID, SIGKILL after :data:`STOP_TIMEOUT`; idempotent."""
        if self.result is not None:
            return self.result
        if self.proc.stdin is not None:
            # Closing stdin is the polite stop for stdio servers (app-server, the fake model).
            self.proc.stdin.close()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.proc.wait(), _STDIN_GRACE)
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), STOP_TIMEOUT)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    self.proc.kill()
                await asyncio.wait_for(self.proc.wait(), STOP_TIMEOUT)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*self._drains, return_exceptions=True), STOP_TIMEOUT)
        for task in self._drains:
            task.cancel()
        self.result = ProcessResult(
            self.proc.returncode, self.stdout_lines, self.stderr_lines, time.monotonic() - self._started
        )
        return self.result

    def _tail(self) -> str:
        return "\n".join(self.stderr_lines[-40:])

    @staticmethod
    async def _drain(stream: asyncio.StreamReader | None, into: list[str]) -> None:
        if stream is None:
            return
        for _ in range(10_000_000):  # bounded: a line per iteration
            line = await stream.readline()
            if not line:
                return
            into.append(line.decode("utf-8", "replace").rstrip("\n"))


class ProcessGroup:
    """The processes one test started; :meth:`stop_all` ends them newest first and keeps the results."""

    def __init__(self) -> None:
        self.handles: list[ProcessHandle] = []
        self.results: dict[str, ProcessResult] = {}

    async def start(self, name: str, argv: Sequence[str], **kwargs: Any) -> ProcessHandle:
        handle = await ProcessHandle.start(name, argv, **kwargs)
        self.handles.append(handle)
        return handle

    def exited(self) -> list[str]:
        """Names of processes that ended on their own (before :meth:`stop_all`)."""
        return [h.name for h in self.handles if h.result is None and h.proc.returncode is not None]

    async def stop_all(self) -> None:
        for handle in reversed(self.handles):
            self.results[handle.name] = await handle.stop()

    def diagnostics(self) -> str:
        """Every process's exit status and stderr tail, for failure messages."""
        parts = []
        for handle in self.handles:
            tail = "\n".join(handle.stderr_lines[-30:])
            parts.append(f"--- {handle.name} (pid {handle.pid}, exit {handle.proc.returncode}) ---\n{tail}")
        return "\n".join(parts)
