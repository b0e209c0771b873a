"""File methods (``fs/*``) on local paths, with Codex's error codes and messages.

A missing path is -32004 (``No such file or directory (os error 2)``); other OS failures are -32603
with Rust's ``<text> (os error N)`` rendering; reading a directory as a file is -32600.
Blocking filesystem calls run in a worker thread so a slow disk never stalls other connections.
"""

from __future__ import annotations

import asyncio
import errno
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from exec_client.errors import NotFound
from exec_client.protocol import (
    FsCopyParams,
    FsCreateDirectoryParams,
    FsPathParams,
    FsRemoveParams,
    FsWriteFileParams,
    b64decode_strict,
    b64encode,
    path_to_uri,
    uri_to_path,
)
from exec_server.spawn import os_error_text
from pycodex.jsonrpc.errors import InternalError, InvalidParams, InvalidRequest, RpcError

__all__ = [
    "canonicalize",
    "copy",
    "create_directory",
    "get_metadata",
    "read_directory",
    "read_file",
    "remove",
    "run_fs",
    "write_file",
]

T = TypeVar("T")


def _path(uri: str) -> Path:
    try:
        return uri_to_path(uri)
    except ValueError as exc:
        raise InvalidParams(str(exc)) from exc


def _os_error(exc: OSError) -> RpcError:
    if exc.errno == errno.ENOENT:
        return NotFound(os_error_text(exc))
    return InternalError(os_error_text(exc))


async def run_fs(fn: Callable[[], T]) -> T:
    try:
        return await asyncio.to_thread(fn)
    except OSError as exc:
        raise _os_error(exc) from exc


async def read_file(p: FsPathParams) -> dict[str, Any]:
    path = _path(p.path)

    def work() -> bytes:
        if path.is_dir():
            raise InvalidRequest(f"path `{path}` is not a file")
        return path.read_bytes()

    return {"dataBase64": b64encode(await run_fs(work))}


async def write_file(p: FsWriteFileParams) -> dict[str, Any]:
    path = _path(p.path)
    try:
        data = b64decode_strict(p.data_base64)
    except ValueError as exc:
        raise InvalidParams(str(exc)) from exc
    await run_fs(lambda: path.write_bytes(data))
    return {}


async def create_directory(p: FsCreateDirectoryParams) -> dict[str, Any]:
    path = _path(p.path)
    if p.recursive:
        await run_fs(lambda: path.mkdir(parents=True, exist_ok=True))
    else:
        await run_fs(path.mkdir)
    return {}


def _ms(seconds: float) -> int:
    return int(seconds * 1000)


async def get_metadata(p: FsPathParams) -> dict[str, Any]:
    path = _path(p.path)

    def work() -> dict[str, Any]:
        link = os.lstat(path)
        target = os.stat(path) if stat.S_ISLNK(link.st_mode) else link
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


async def read_directory(p: FsPathParams) -> dict[str, Any]:
    path = _path(p.path)

    def work() -> list[dict[str, Any]]:
        entries = []
        with os.scandir(path) as it:
            for entry in it:
                entries.append(
                    {"fileName": entry.name, "isDirectory": entry.is_dir(), "isFile": entry.is_file()}
                )
        return sorted(entries, key=lambda e: str(e["fileName"]))

    return {"entries": await run_fs(work)}


async def canonicalize(p: FsPathParams) -> dict[str, Any]:
    path = _path(p.path)
    resolved = await run_fs(lambda: path.resolve(strict=True))
    return {"path": path_to_uri(resolved)}


async def copy(p: FsCopyParams) -> dict[str, Any]:
    src, dst = _path(p.source_path), _path(p.destination_path)

    def work() -> None:
        if src.is_dir():
            if not p.recursive:
                raise InvalidRequest(f"path `{src}` is a directory; set recursive to copy it")
            shutil.copytree(src, dst, symlinks=True)
        else:
            shutil.copy2(src, dst)

    await run_fs(work)
    return {}


async def remove(p: FsRemoveParams) -> dict[str, Any]:
    path = _path(p.path)

    def work() -> None:
        try:
            if path.is_dir() and not path.is_symlink():
                if p.recursive:
                    shutil.rmtree(path)
                else:
                    path.rmdir()
            else:
                path.unlink()
        except FileNotFoundError:
            if not p.force:
                raise

    await run_fs(work)
    return {}
