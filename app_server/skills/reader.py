"""The file access skills discovery needs, as an interface, with a local and an environment-backed version.

Discovery never touches `os` directly: the app-server's own skills use `LocalSkillReader`, a selected
capability root uses whatever reader the lead builds for that environment (e.g. `EnvironmentSkillReader`
over the exec-server `fs/*` methods). Every method raises OSError (FileNotFoundError, ...) on failure.
"""

from __future__ import annotations

import asyncio
import errno
import os
import stat as _stat
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar, runtime_checkable

from exec_client.wire.errors import ExecServerClosed, ExecServerError

__all__ = [
    "EnvironmentLike",
    "EnvironmentSkillReader",
    "FsEntry",
    "FsStat",
    "LocalSkillReader",
    "SkillEntry",
    "SkillFileReader",
    "SkillStat",
]


T = TypeVar("T")


class SkillEntry(Protocol):
    """One directory entry; `is_dir`/`is_file` follow symlinks (as `os.scandir` and `fs/readDirectory` do)."""

    @property
    def name(self) -> str:
        """The entry's file name."""

    @property
    def is_dir(self) -> bool:
        """Whether it is (or links to) a directory."""

    @property
    def is_file(self) -> bool:
        """Whether it is (or links to) a regular file."""


class SkillStat(Protocol):
    """File facts; `is_symlink` describes the path itself, the rest its target (`fs/getMetadata`)."""

    @property
    def is_dir(self) -> bool:
        """Whether the target is a directory."""

    @property
    def is_file(self) -> bool:
        """Whether the target is a regular file."""

    @property
    def is_symlink(self) -> bool:
        """Whether the path itself is a symlink."""

    @property
    def size(self) -> int:
        """The target's size in bytes."""


@runtime_checkable
class SkillFileReader(Protocol):
    """How skill discovery reads files, locally or through an execution environment (errors are OSError)."""

    async def read_file(self, path: Path) -> bytes:
        """The file's bytes."""

    async def list_dir(self, path: Path) -> Sequence[SkillEntry]:
        """The directory's entries."""

    async def stat(self, path: Path) -> SkillStat:
        """The path's facts (``is_symlink`` of the path, the rest of its target)."""

    async def canonicalize(self, path: Path) -> Path:
        """The path with every symlink resolved; NotImplementedError when the backend cannot tell."""
        ...


@dataclass(frozen=True, slots=True)
class FsEntry:
    """A directory entry (``SkillEntry``) as plain data."""

    name: str
    is_dir: bool
    is_file: bool


@dataclass(frozen=True, slots=True)
class FsStat:
    """File facts (``SkillStat``) as plain data."""

    is_dir: bool
    is_file: bool
    is_symlink: bool
    size: int


class LocalSkillReader:
    """The app-server's own filesystem, off the event loop."""

    async def read_file(self, path: Path) -> bytes:
        """The file's bytes (read in a worker thread)."""
        return await asyncio.to_thread(path.read_bytes)

    async def list_dir(self, path: Path) -> Sequence[SkillEntry]:
        """The directory's entries, sorted by name."""
        def work() -> list[FsEntry]:
            with os.scandir(path) as it:
                return sorted((FsEntry(e.name, e.is_dir(), e.is_file()) for e in it), key=lambda e: e.name)

        return await asyncio.to_thread(work)

    async def stat(self, path: Path) -> SkillStat:
        """The path's facts from ``lstat`` and ``stat``."""
        def work() -> FsStat:
            link = os.lstat(path)
            target = os.stat(path) if _stat.S_ISLNK(link.st_mode) else link
            is_link = _stat.S_ISLNK(link.st_mode)
            return FsStat(
                _stat.S_ISDIR(target.st_mode), _stat.S_ISREG(target.st_mode), is_link, target.st_size
            )

        return await asyncio.to_thread(work)

    async def canonicalize(self, path: Path) -> Path:
        """The path with every symlink resolved; raises OSError when it does not exist."""
        return await asyncio.to_thread(lambda: path.resolve(strict=True))


class EnvironmentLike(Protocol):
    """The slice of `exec_client.environment.ExecutionEnvironment` discovery uses."""

    async def read_file(self, path: Path) -> bytes:
        """The file's bytes."""

    async def list_dir(self, path: Path) -> Sequence[SkillEntry]:
        """The directory's entries."""

    async def metadata(self, path: Path) -> SkillStat:
        """The path's facts (``fs/getMetadata``)."""


class EnvironmentSkillReader:
    """Adapts an execution environment (local or remote exec-server) to `SkillFileReader`.

    `canonicalize` is optional because the environment interface has none; pass e.g. the exec-server
    client's `canonicalize` (`fs/canonicalize`). Without it, symlinks inside a root are refused.
    Exec-server failures (error answers, a closed connection) surface as OSError, as the interface says.
    """

    def __init__(
        self, env: EnvironmentLike, canonicalize: Callable[[Path], Awaitable[Path]] | None = None
    ) -> None:
        self._env = env
        self._canonicalize = canonicalize

    async def read_file(self, path: Path) -> bytes:
        """The file's bytes, through the environment."""
        return await _as_oserror(self._env.read_file(path), path)

    async def list_dir(self, path: Path) -> Sequence[SkillEntry]:
        """The directory's entries, through the environment."""
        return await _as_oserror(self._env.list_dir(path), path)

    async def stat(self, path: Path) -> SkillStat:
        """The path's facts, through the environment."""
        return await _as_oserror(self._env.metadata(path), path)

    async def canonicalize(self, path: Path) -> Path:
        """The path with every symlink resolved (``fs/canonicalize``); NotImplementedError if unsupported."""
        if self._canonicalize is None:
            raise NotImplementedError("this environment cannot resolve symlinks")
        return await _as_oserror(self._canonicalize(path), path)


async def _as_oserror(call: Awaitable[T], path: Path) -> T:
    try:
        return await call
    except (ExecServerError, ExecServerClosed) as exc:
        raise OSError(errno.EIO, getattr(exc, "message", None) or str(exc), str(path)) from exc
