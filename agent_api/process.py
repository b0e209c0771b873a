"""Spawning the agent child in its own process group, and the byte-level plumbing around it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping, Sequence
from pathlib import Path

from agent_api.channel import BoundedChannel
from pycodex.jsonrpc.framing import LineBuffer, OverlongLine

__all__ = ["MAX_LINE_BYTES", "STDERR_TAIL_BYTES", "kill_group", "pump_lines", "spawn", "stderr_tail", "write_stdin"]

#: A longer stdout line is dropped (reported by its size only) instead of growing a buffer without bound.
MAX_LINE_BYTES = 16 * 1024 * 1024
#: Only the end of stderr is kept: it is used to classify an exit, never shown.
STDERR_TAIL_BYTES = 64 * 1024
_READ_CHUNK = 64 * 1024


async def spawn(
    argv: Sequence[str], *, cwd: Path, env_overrides: Mapping[str, str], stdin: bool = True
) -> asyncio.subprocess.Process:
    """Start ``argv`` in a new session (so cancel can kill the whole group) with piped stdio."""
    env = {**os.environ, **env_overrides}
    return await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
        limit=_READ_CHUNK,
    )


def kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the child's process group (it leads its own session); a no-op once it is gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


async def write_stdin(proc: asyncio.subprocess.Process, data: bytes) -> None:
    """Write ``data`` and close stdin; Codex reads stdin to EOF, so it must always be closed."""
    stdin = proc.stdin
    if stdin is None:
        return
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.write(data)
        await stdin.drain()
    stdin.close()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        await stdin.wait_closed()


async def pump_lines(reader: asyncio.StreamReader, out: BoundedChannel[bytes | OverlongLine]) -> None:
    """Read ``reader`` to EOF, sending each LF-terminated line into ``out`` with an awaited send.

    The awaited send is the backpressure: while ``out`` is full nothing more is read, the pipe fills and
    the child blocks on its writes. If the receiver leaves, reading continues so the child can finish.
    """
    buffer = LineBuffer(MAX_LINE_BYTES)
    try:
        while chunk := await reader.read(_READ_CHUNK):
            for line in buffer.feed(chunk):
                await out.send(line)
        for line in buffer.feed_eof():
            await out.send(line)
    finally:
        out.close_sender()


async def stderr_tail(reader: asyncio.StreamReader) -> bytes:
    """Read stderr to EOF keeping only its last ``STDERR_TAIL_BYTES`` (the child must never block on it)."""
    tail = b""
    while chunk := await reader.read(_READ_CHUNK):
        tail = (tail + chunk)[-STDERR_TAIL_BYTES:]
    return tail
