"""File methods (``fs/*``) on local paths, with Codex's error codes and messages.

A missing path is -32004 (``No such file or directory (os error 2)``); other OS failures are -32603
with Rust's ``<text> (os error N)`` rendering; reading anything but a regular file is -32600
(``path `p` is not a file``). Every method first checks its request's ``sandbox`` policy on the
resolved path (``fs_policy``/``fs_paths``) and then acts on that resolved path.

``fs/readFile`` answers in one message, so it stops at ``MAX_READ_FILE_BYTES`` (32 MiB): our
websocket frames carry at most 64 MiB and base64 adds a third. Codex's own cap is 512 MiB; larger
files are read with ``fs/open`` + ``fs/readBlock``. Blocking filesystem calls run in a worker thread
so a slow disk never stalls other connections.
"""

from __future__ import annotations

import asyncio
import errno
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from exec_client.wire.errors import NotFound
from exec_client.wire.fs_paths import denial_error, entry_path, policy_for, real_path
from exec_client.wire.fs_policy import Denial, Need, PolicyDenied
from exec_client.wire.protocol import (
    FsCreateDirectoryParams,
    FsPathParams,
    FsRemoveParams,
    FsWriteFileParams,
    b64decode_strict,
    b64encode,
    path_to_uri,
    uri_to_path,
)
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InternalError, InvalidParams, InvalidRequest, RpcError
from pycodex.platform.spawn import os_error_text

__all__ = [
    "MAX_READ_FILE_BYTES",
    "canonicalize",
    "create_directory",
    "get_metadata",
    "read_directory",
    "read_file",
    "remove",
    "request_path",
    "run_fs",
    "write_file",
]

T = TypeVar("T")

MAX_READ_FILE_BYTES = 32 * 1024 * 1024
_READ_CHUNK = 1024 * 1024


def request_path(uri: str) -> Path:
    """The local path of a ``file://`` URI from a request (``InvalidParams`` if it is not one)."""
    try:
        return uri_to_path(uri)
    except ValueError as exc:
        raise InvalidParams(str(exc)) from exc


def _os_error(exc: OSError) -> RpcError:
    if exc.errno == errno.ENOENT:
        return NotFound(os_error_text(exc))
    return InternalError(os_error_text(exc))


async def run_fs(fn: Callable[[], T]) -> T:
    """Run blocking filesystem work in a thread, turning policy denials and OS errors into Codex's errors."""
    try:
        return await asyncio.to_thread(fn)
    except PolicyDenied as exc:
        raise denial_error(exc) from exc
    except OSError as exc:
        raise _os_error(exc) from exc


def not_a_file(path: Path | str) -> InvalidRequest:
    """The error for a path that should be a regular file and is not."""
    return InvalidRequest(f"path `{path}` is not a file")


def open_for_write(target: str, shown: Path | str, *, sandboxed: bool, mode: int = 0o666) -> int:
    """Open a regular file for writing (creating it) and truncate it; the descriptor.

    Never through a symlink (``O_NOFOLLOW``) nor into a fifo or device. Under a sandbox policy a file with
    other hard links is refused (``Permission denied``) before anything is truncated: its other names may
    lie outside the writable roots, and writing the shared inode would change them too (Codex 0.169 writes
    through). Refused rather than copied, because a copy would silently split a file linked on purpose.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(target, flags, mode)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise not_a_file(shown)
        if sandboxed and st.st_nlink > 1:
            raise PolicyDenied(Denial.DENIED, target)
        os.ftruncate(fd, 0)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_regular(target: str, shown: Path, limit: int) -> bytes:
    # O_NONBLOCK: opening a fifo must not wait for a writer; regular files ignore the flag.
    fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise not_a_file(shown)
        too_large = InvalidRequest(f"file is too large to read: limit is {limit} bytes")
        if st.st_size > limit:
            raise too_large
        parts: list[bytes] = []
        size = 0
        while size <= limit:  # the file may grow while we read it
            part = os.read(fd, min(_READ_CHUNK, limit + 1 - size))
            if not part:
                break
            parts.append(part)
            size += len(part)
        if size > limit:
            raise too_large
        return b"".join(parts)
    finally:
        os.close(fd)


async def read_file(p: FsPathParams) -> JsonObj:
    """``fs/readFile``: a regular file's bytes, base64-encoded (size-capped)."""
    path = request_path(p.path)

    def work() -> bytes:
        target = real_path(path)
        policy_for(p.sandbox).check(target, Need.READ)
        return _read_regular(target, path, MAX_READ_FILE_BYTES)

    return {"dataBase64": b64encode(await run_fs(work))}


async def write_file(p: FsWriteFileParams) -> JsonObj:
    """``fs/writeFile``: write base64 data to a file, creating or truncating it."""
    path = request_path(p.path)
    try:
        data = b64decode_strict(p.data_base64)
    except ValueError as exc:
        detail = str(exc).removeprefix("invalid base64: ")
        raise InvalidRequest(f"fs/writeFile requires valid base64 dataBase64: {detail}") from exc

    def work() -> None:
        target = real_path(path)
        policy = policy_for(p.sandbox)
        policy.check(target, Need.WRITE)
        fd = open_for_write(target, path, sandboxed=policy.rules is not None)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)

    await run_fs(work)
    return {}


async def create_directory(p: FsCreateDirectoryParams) -> JsonObj:
    """``fs/createDirectory``: create a directory (with its parents when ``recursive``)."""
    path = request_path(p.path)

    def work() -> None:
        policy = policy_for(p.sandbox)
        target = real_path(path)
        if not p.recursive:
            policy.check(target, Need.WRITE)
            os.mkdir(target)
            return
        # Every directory that ``mkdir -p`` would create must be writable.
        missing, cur = [], target
        while not os.path.lexists(cur) and cur != os.path.dirname(cur):
            missing.append(cur)
            cur = os.path.dirname(cur)
        for directory in missing or [target]:
            policy.check(directory, Need.WRITE if missing else Need.READ)
        os.makedirs(target, exist_ok=True)

    await run_fs(work)
    return {}


def _ms(seconds: float) -> int:
    return int(seconds * 1000)


async def get_metadata(p: FsPathParams) -> JsonObj:
    """``fs/getMetadata``: kind, size and times of a path."""
    path = request_path(p.path)

    def work() -> JsonObj:
        policy = policy_for(p.sandbox)
        entry, target_path = entry_path(path), real_path(path)
        policy.check(entry, Need.READ)
        policy.check(target_path, Need.READ)
        link = os.lstat(entry)
        target = os.stat(target_path) if stat.S_ISLNK(link.st_mode) else link
        birth = getattr(target, "st_birthtime", None)
        return {
            "isDirectory": stat.S_ISDIR(target.st_mode),
            "isFile": stat.S_ISREG(target.st_mode),
            "isSymlink": stat.S_ISLNK(link.st_mode),
            "size": target.st_size,
            # Linux has no portable birth time through stat(2); Codex reports 0 there too.
            "createdAtMs": _ms(birth) if birth is not None else 0,
            "modifiedAtMs": _ms(target.st_mtime),
        }

    return await run_fs(work)


async def read_directory(p: FsPathParams) -> JsonObj:
    """``fs/readDirectory``: a directory's entries with their kinds."""
    path = request_path(p.path)

    def work() -> list[JsonObj]:
        target = real_path(path)
        policy_for(p.sandbox).check(target, Need.READ)
        entries = []
        with os.scandir(target) as it:
            for entry in it:
                entries.append(
                    {"fileName": entry.name, "isDirectory": entry.is_dir(), "isFile": entry.is_file()}
                )
        return sorted(entries, key=lambda e: str(e["fileName"]))

    return {"entries": await run_fs(work)}


async def canonicalize(p: FsPathParams) -> JsonObj:
    """``fs/canonicalize``: the path with every symlink resolved (it must exist)."""
    path = request_path(p.path)

    def work() -> Path:
        resolved = path.resolve(strict=True)
        policy_for(p.sandbox).check(str(resolved), Need.READ)
        return resolved

    return {"path": path_to_uri(await run_fs(work))}


async def remove(p: FsRemoveParams) -> JsonObj:
    """``fs/remove``: remove a file, a symlink (never its target) or, with ``recursive``, a tree."""
    path = request_path(p.path)

    def work() -> None:
        policy = policy_for(p.sandbox)
        target = entry_path(path)  # removing a symlink removes the link, never its target
        try:
            policy.check(target, Need.READ)
            st = os.lstat(target)
        except (PolicyDenied, FileNotFoundError) as exc:
            hidden = not isinstance(exc, PolicyDenied) or exc.denial is Denial.HIDDEN
            if hidden and p.force:
                return
            raise
        # Removing an entry changes its directory too, so both must be writable.
        policy.check(os.path.dirname(target), Need.WRITE)
        if stat.S_ISDIR(st.st_mode):
            if p.recursive:
                policy.check_tree(target, Need.WRITE)
                shutil.rmtree(target)
            else:
                policy.check(target, Need.WRITE)
                os.rmdir(target)
        else:
            policy.check(target, Need.WRITE)
            os.unlink(target)

    await run_fs(work)
    return {}
