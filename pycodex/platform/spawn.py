"""The spawning edge: start a child in its own session/process group, with pipes or a pty.

One home for starting commands: the exec-server starts ``process/start`` children with it and
``exec_client``'s ``LocalEnvironment`` its in-process ones. ``SpawnedProcess.wait`` watches a pidfd, so it
returns when the leader exits even while background grandchildren keep its pipes open.

Reading is pull-based (``read_chunk``): nothing is read from the child's pipe until the caller asks, so
a slow consumer throttles the child through the kernel pipe buffer instead of growing our memory.
Teardown signals the whole process group, so grandchildren (``sleep 100 &``) die with the leader.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import struct
import subprocess
import sys
import termios
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pycodex.platform.fd_reader import FdReader

__all__ = [
    "SpawnError", "SpawnRequest", "SpawnedProcess", "exit_code_of", "os_error_text", "spawn",
    "watch_children_with_pidfds",
]

STDIN_DRAIN_TIMEOUT_S = 5.0
PIPE_BUFFER_BYTES = 256 * 1024


def watch_children_with_pidfds() -> bool:
    """Make asyncio reap this process's children through pidfds on the running loop; True if it did.

    Python 3.11's default child watcher starts one thread per child just to ``waitpid`` it: with many
    commands running that is a thread each (41 % of a busy exec-server's samples). 3.12 already picks
    the pidfd watcher itself. This sets asyncio's process-wide watcher, so servers call it once at
    start-up, from their event loop; kernels without ``pidfd_open`` keep the default.
    """
    if sys.version_info >= (3, 12) or not hasattr(os, "pidfd_open"):
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))  # present in the headers is not the same as allowed here
    except OSError:
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        watcher = asyncio.PidfdChildWatcher()
        watcher.attach_loop(asyncio.get_running_loop())
        asyncio.set_child_watcher(watcher)
    return True


class SpawnError(Exception):
    """The child could not be started; ``message`` is in Codex's wording (``... (os error N)``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def os_error_text(exc: OSError) -> str:
    """Render like Rust's io::Error Display: ``No such file or directory (os error 2)``."""
    if exc.errno is None:
        return str(exc)
    return f"{os.strerror(exc.errno)} (os error {exc.errno})"


def exit_code_of(returncode: int) -> int:
    """Signals are reported as 128+N, as a shell would."""
    return 128 - returncode if returncode < 0 else returncode


@dataclass(frozen=True, slots=True)
class SpawnRequest:
    """What to start: argv, working dir, the full environment, and whether to use a pty or a stdin pipe."""

    argv: list[str]
    cwd: Path
    env: dict[str, str]
    tty: bool = False
    pipe_stdin: bool = False
    arg0: str | None = None
    #: Runs in the child right before exec (e.g. to confine it); failures abort the start.
    confine: Callable[[], None] | None = None


def _make_controlling_tty() -> None:  # runs in the child after setsid()
    with contextlib.suppress(OSError):
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def _child_setup(tty: bool, confine: Callable[[], None] | None) -> Callable[[], None] | None:
    if not tty and confine is None:
        return None

    def setup() -> None:
        if tty:
            _make_controlling_tty()
        if confine is not None:
            confine()

    return setup


class SpawnedProcess:
    """A running child. Streams are named ``stdout``/``stderr``, or ``pty`` for a terminal."""

    def __init__(
        self,
        proc: asyncio.subprocess.Process,
        readers: dict[str, FdReader],
        pty_master: int | None,
    ) -> None:
        self._proc = proc
        self._readers = readers
        self._pty_master = pty_master
        self.pid = proc.pid
        self.returncode: int | None = None
        # A pidfd tells us when the leader exits even while its pipes stay open (asyncio's own
        # wait() only returns once every pipe is closed, e.g. never with `sleep 100 &`).
        try:
            self._pidfd: int | None = os.pidfd_open(proc.pid)
        except (OSError, AttributeError):
            self._pidfd = None

    @property
    def streams(self) -> list[str]:
        """The names of the child's output streams (``stdout``/``stderr``, or ``pty``)."""
        return list(self._readers)

    @property
    def has_stdin(self) -> bool:
        """The child has a writable stdin (a pty, or a pipe asked for with ``pipe_stdin``)."""
        return self._pty_master is not None or self._proc.stdin is not None

    async def read_chunk(self, stream: str, size: int) -> bytes:
        """Up to ``size`` bytes from ``stream``; ``b""`` at end of stream (a pty's EIO counts as EOF).

        Cancelling a read closes that stream: a pump that is cancelled is done with it.
        """
        return await self._readers[stream].read(size)

    async def wait(self) -> int:
        """Wait for the leader to exit; returns the exit code (signals as 128+N)."""
        if self._pidfd is not None:
            loop = asyncio.get_running_loop()
            exited: asyncio.Future[None] = loop.create_future()

            def on_exit() -> None:
                if not exited.done():
                    exited.set_result(None)

            loop.add_reader(self._pidfd, on_exit)
            try:
                await exited
            finally:
                loop.remove_reader(self._pidfd)
                os.close(self._pidfd)
                self._pidfd = None
        # The child watcher reaps the leader right after it exits; poll briefly for its status.
        for _ in range(100_000):
            rc = self._proc.returncode
            if rc is not None:
                self.returncode = rc
                return exit_code_of(rc)
            await asyncio.sleep(0.002)
        rc = await self._proc.wait()
        self.returncode = rc
        return exit_code_of(rc)

    async def write_stdin(self, data: bytes) -> bool:
        """Write to the child's stdin or pty; False if it is closed."""
        if self._pty_master is not None:
            return await _write_fd(self._pty_master, data)
        stdin = self._proc.stdin
        if stdin is None or stdin.is_closing():
            return False
        try:
            stdin.write(data)
            # A child that never reads must not wedge the connection: after a while the bytes
            # stay queued in the pipe transport and the write still counts as accepted.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stdin.drain(), STDIN_DRAIN_TIMEOUT_S)
        except (BrokenPipeError, ConnectionResetError):
            return False
        return True

    def resize_pty(self, rows: int, cols: int) -> bool:
        """Set the terminal size (TIOCSWINSZ); False when the child has no pty."""
        if self._pty_master is None:
            return False
        fcntl.ioctl(self._pty_master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        return True

    def close_stdin(self) -> None:
        """Close the child's stdin pipe (EOF for the reader); a pty is left open."""
        if self._proc.stdin is not None and not self._proc.stdin.is_closing():
            self._proc.stdin.close()

    def signal_group(self, sig: int) -> bool:
        """Signal the whole process group; False if it no longer exists."""
        try:
            os.killpg(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def close_pty(self) -> None:
        """Stop reading the terminal (background children may keep it open forever)."""
        if self._pty_master is not None:
            for reader in self._readers.values():
                reader.close()
            fd, self._pty_master = self._pty_master, None
            with contextlib.suppress(OSError):
                os.close(fd)


async def _write_fd(fd: int, data: bytes) -> bool:
    view = memoryview(data)
    for _ in range(10_000):  # bounded: a terminal that never drains gets a False after ~10 s
        if not view:
            return True
        try:
            written = os.write(fd, view)
        except BlockingIOError:
            await asyncio.sleep(0.001)
            continue
        except OSError:
            return False
        view = view[written:]
    return not view


async def spawn(request: SpawnRequest) -> SpawnedProcess:
    """Start the child; raises SpawnError with Codex's message when exec or chdir fails."""
    if not request.argv:
        raise SpawnError("argv must not be empty")
    program = request.argv[0]
    args = [request.arg0 if request.arg0 is not None else program, *request.argv[1:]]
    try:
        if request.tty:
            try:
                return await _spawn_pty(request, program, args)
            except subprocess.SubprocessError as exc:
                raise SpawnError(f"failed to apply the sandbox: {exc}") from exc
        return await _spawn_pipes(request, program, args)
    except OSError as exc:
        raise SpawnError(os_error_text(exc)) from exc
    except subprocess.SubprocessError as exc:  # the confine step failed in the child
        raise SpawnError(f"failed to apply the sandbox: {exc}") from exc


async def _spawn_pipes(request: SpawnRequest, program: str, args: list[str]) -> SpawnedProcess:
    # Our own pipes rather than asyncio's PIPE: the read ends go to FdReaders (one os.read per chunk
    # instead of a StreamReader's copies); the parent's write ends are closed once the child has them.
    out_r, out_w = os.pipe()
    err_r = err_w = -1
    try:
        err_r, err_w = os.pipe()
        for fd in (out_w, err_w):
            _widen_pipe(fd)
        proc = await asyncio.create_subprocess_exec(
            *args,
            executable=program,
            stdin=asyncio.subprocess.PIPE if request.pipe_stdin else asyncio.subprocess.DEVNULL,
            stdout=out_w,
            stderr=err_w,
            cwd=request.cwd,
            env=request.env,
            start_new_session=True,
            preexec_fn=_child_setup(False, request.confine),
        )
    except BaseException:
        for fd in (out_r, err_r):
            if fd >= 0:
                os.close(fd)
        raise
    finally:
        for fd in (out_w, err_w):
            if fd >= 0:
                os.close(fd)
    return SpawnedProcess(proc, {"stdout": FdReader(out_r), "stderr": FdReader(err_r)}, None)


def _widen_pipe(fd: int) -> None:
    # With nothing read ahead the kernel buffer is all the slack between child and reader; 64 KiB made
    # the child stall whenever the reader was busy sending (StreamReader used to buffer ~128 KiB more).
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BUFFER_BYTES)


async def _spawn_pty(request: SpawnRequest, program: str, args: list[str]) -> SpawnedProcess:
    master, slave = os.openpty()
    preexec = _child_setup(True, request.confine)
    try:
        proc = await asyncio.create_subprocess_exec(
            *args,
            executable=program,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=request.cwd,
            env=request.env,
            start_new_session=True,
            preexec_fn=preexec,
        )
    except BaseException:
        os.close(master)
        raise
    finally:
        os.close(slave)
    # The reader owns a duplicate so that its EOF/cancel close never closes the fd we write to.
    return SpawnedProcess(proc, {"pty": FdReader(os.dup(master))}, master)
