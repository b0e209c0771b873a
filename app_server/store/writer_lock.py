"""The cross-process "one writer per thread" lock, the same one Codex takes.

Codex 0.169 holds ``flock(LOCK_EX)`` on ``CODEX_HOME/thread-writer-locks/<thread id>.lock`` while a thread is
loaded and deletes the file when it lets go (checked against the binary). Taking the very same lock makes a
thread open in Codex refused here and the other way round, with Codex's error text. Creating and deleting
the file happen under ``.coordination.lock`` so one program can never lock a file the other just unlinked.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from pathlib import Path
from typing import Final

from .errors import ThreadLockedError

LOCKS_DIR: Final = "thread-writer-locks"
COORDINATION_FILE: Final = ".coordination.lock"
_COORDINATION_WAIT_S: Final = 5.0


class WriterLock:
    """A held writer lock; `release` lets it go (and removes the file, as Codex does)."""

    def __init__(self, path: Path, fd: int, coordination: Path) -> None:
        self.path = path
        self._fd: int | None = fd
        self._coordination = coordination

    @classmethod
    def acquire(cls, codex_home: Path, thread_id: str) -> WriterLock:
        """Take the thread's writer lock; ThreadLockedError when another writer (any program) holds it."""
        folder = codex_home / LOCKS_DIR
        folder.mkdir(parents=True, exist_ok=True)
        coordination = folder / COORDINATION_FILE
        path = folder / f"{thread_id}.lock"
        with _Coordinated(coordination):
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise ThreadLockedError(thread_id) from None
                raise
        return cls(path, fd, coordination)

    @property
    def held(self) -> bool:
        """Whether the lock is still held."""
        return self._fd is not None

    def release(self) -> None:
        """Remove the lock file and let the lock go; a second call does nothing."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            with _Coordinated(self._coordination):
                self.path.unlink(missing_ok=True)
        finally:
            os.close(fd)


class _Coordinated:
    """``flock`` on the coordination file for the duration of a ``with`` block (held for microseconds)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._fd = -1

    def __enter__(self) -> None:
        self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        deadline = time.monotonic() + _COORDINATION_WAIT_S
        while True:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(self._fd)
                    raise TimeoutError(f"{self._path} stayed locked for {_COORDINATION_WAIT_S:.0f} s") from None
                time.sleep(0.005)  # the other holder keeps it for microseconds

    def __exit__(self, *exc: object) -> None:
        os.close(self._fd)  # closing drops the flock
