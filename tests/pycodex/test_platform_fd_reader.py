"""FdReader, the pull-based reader behind spawn's pipes and pty: EOF semantics and the fd's lifecycle."""

from __future__ import annotations

import asyncio
import errno
import fcntl
import os
import struct
import termios
from pathlib import Path

import pytest

from pycodex.platform.fd_reader import FdReader
from pycodex.platform.spawn import SpawnRequest, spawn

ENV = {"PATH": "/usr/bin:/bin"}


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError as exc:
        assert exc.errno == errno.EBADF
        return False
    return True


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


async def _until_waiting(task: asyncio.Task[bytes]) -> None:
    for _ in range(100):  # a handful of loop turns at most; bounded, no wall-clock sleep
        if task.done():
            return
        await asyncio.sleep(0)


async def test_reads_only_what_is_asked_and_closes_its_fd_at_eof() -> None:
    r, w = os.pipe()
    reader = FdReader(r)
    try:
        os.write(w, b"abcdef")
        assert await reader.read(2) == b"ab"
        # Nothing was read ahead: the rest is still in the kernel pipe.
        assert struct.unpack("i", fcntl.ioctl(r, termios.FIONREAD, b"\0\0\0\0"))[0] == 4
        assert await reader.read(100) == b"cdef"
        pending = asyncio.create_task(reader.read(100))
        await _until_waiting(pending)
        assert not pending.done()
        os.write(w, b"x")
        assert await asyncio.wait_for(pending, 10) == b"x"
    finally:
        os.close(w)
    assert await asyncio.wait_for(reader.read(100), 10) == b""
    assert reader.closed and not _is_open(r)
    assert await reader.read(100) == b""  # EOF stays EOF


async def test_a_cancelled_read_closes_the_fd_and_unregisters_it() -> None:
    r, w = os.pipe()
    reader = FdReader(r)
    try:
        pending = asyncio.create_task(reader.read(100))
        await _until_waiting(pending)
        pending.cancel()
        with pytest.raises(asyncio.CancelledError):
            await pending
        assert reader.closed and not _is_open(r)
        assert not asyncio.get_running_loop().remove_reader(r)
        reader.close()  # idempotent
    finally:
        os.close(w)


async def test_close_wakes_a_waiting_read_with_eof() -> None:
    r, w = os.pipe()
    reader = FdReader(r)
    try:
        pending = asyncio.create_task(reader.read(100))
        await _until_waiting(pending)
        reader.close()
        assert await asyncio.wait_for(pending, 10) == b""
        assert not _is_open(r)
    finally:
        os.close(w)


async def test_spawned_pipes_and_pty_leave_no_fd_behind(tmp_path: Path) -> None:
    before = _open_fds()
    script = "head -c 300000 /dev/zero; echo err >&2"
    for tty in (False, True):
        spawned = await spawn(SpawnRequest(["/bin/sh", "-c", script], tmp_path, ENV, tty=tty))
        got: dict[str, int] = {}
        for stream in spawned.streams:
            got[stream] = 0
            while data := await asyncio.wait_for(spawned.read_chunk(stream, 65536), 30):
                got[stream] += len(data)
        assert await asyncio.wait_for(spawned.wait(), 30) == 0
        spawned.close_pty()
        if tty:  # a pty's EIO at the end counts as EOF; the terminal turns \n into \r\n
            assert got == {"pty": 300000 + len(b"err\r\n")}
        else:
            assert got == {"stdout": 300000, "stderr": 4}
    assert _open_fds() == before


async def test_a_stream_nobody_reads_is_closed_with_the_process(tmp_path: Path) -> None:
    before = _open_fds()
    spawned = await spawn(SpawnRequest(["/bin/sh", "-c", "echo out"], tmp_path, ENV))
    assert await asyncio.wait_for(spawned.wait(), 30) == 0
    del spawned
    assert _open_fds() == before
