"""fs/* requests: files on the app-server's own machine, and fs/watch change notifications.

Paths must be absolute. They are resolved and checked with the same policy code as the exec-server
(``exec_client.wire.fs_policy``); app-server clients act for the user, so the policy is unrestricted,
as in Codex, but the check stays in the path so a restricted policy is one argument away. OS failures
answer with Rust's ``<text> (os error N)`` rendering."""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import watchfiles

from app_server.context import HandlerContext
from app_server.protocol import responses_fs as rf
from app_server.protocol import surface as p
from app_server.protocol.base import NOT_ABSOLUTE
from app_server.session import Session
from exec_client.local_environment import remove_path
from exec_client.wire.fs_paths import denial_error, entry_path, policy_for, real_path
from exec_client.wire.fs_policy import Need, PolicyDenied
from pycodex.jsonrpc.errors import InternalError, InvalidRequest, RpcError
from pycodex.platform.spawn import os_error_text

__all__ = [
    "copy", "create_directory", "get_metadata", "read_directory", "read_file", "remove", "unwatch", "watch",
    "write_file",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")


def _abs(raw: str) -> Path:
    path = Path(raw)
    if not path.is_absolute():
        raise InvalidRequest(NOT_ABSOLUTE)
    return path


def _checked(raw: str, need: Need, *, entry: bool = False, tree: bool = False) -> Path:
    path = _abs(raw)
    resolved = entry_path(path) if entry else real_path(path)
    policy = policy_for(None)
    try:
        (policy.check_tree if tree else policy.check)(resolved, need)
    except PolicyDenied as exc:
        raise denial_error(exc) from None
    return Path(resolved)


def _os_error(exc: OSError) -> RpcError:
    return InternalError(os_error_text(exc))


async def _run(work: Callable[[], T]) -> T:
    try:
        return await asyncio.to_thread(work)
    except OSError as exc:
        raise _os_error(exc) from None


async def read_file(ctx: HandlerContext, params: p.FsPathParams) -> rf.FsReadFileResponse:
    path = _checked(params.path, Need.READ)
    if path.is_dir():
        raise InvalidRequest(f"path `{path}` is not a file")
    data = await _run(path.read_bytes)
    return rf.FsReadFileResponse(data_base64=base64.b64encode(data).decode())


async def write_file(ctx: HandlerContext, params: p.FsWriteFileParams) -> rf.FsWriteFileResponse:
    try:
        data = base64.b64decode(params.data_base64, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidRequest(f"fs/writeFile requires valid base64 dataBase64: {exc}") from None
    path = _checked(params.path, Need.WRITE)
    await _run(lambda: path.write_bytes(data))
    return rf.FsWriteFileResponse()


async def create_directory(ctx: HandlerContext, params: p.FsCreateDirectoryParams) -> rf.FsCreateDirectoryResponse:
    path = _checked(params.path, Need.WRITE)
    recursive = params.recursive is not False  # Codex defaults to creating parents
    await _run(lambda: path.mkdir(parents=recursive, exist_ok=recursive))
    return rf.FsCreateDirectoryResponse()


async def get_metadata(ctx: HandlerContext, params: p.FsPathParams) -> rf.FsGetMetadataResponse:
    path = _checked(params.path, Need.READ)
    link = Path(entry_path(_abs(params.path)))

    def work() -> rf.FsGetMetadataResponse:
        st = path.stat()
        return rf.FsGetMetadataResponse(
            is_directory=path.is_dir(), is_file=path.is_file(), is_symlink=link.is_symlink(),
            created_at_ms=int(getattr(st, "st_birthtime", 0) * 1000), modified_at_ms=int(st.st_mtime * 1000),
        )

    return await _run(work)


async def read_directory(ctx: HandlerContext, params: p.FsPathParams) -> rf.FsReadDirectoryResponse:
    path = _checked(params.path, Need.READ)

    def work() -> list[rf.FsReadDirectoryEntry]:
        with os.scandir(path) as it:
            entries = [rf.FsReadDirectoryEntry(file_name=e.name, is_directory=e.is_dir(), is_file=e.is_file())
                       for e in it]
        return sorted(entries, key=lambda e: e.file_name)

    return rf.FsReadDirectoryResponse(entries=await _run(work))


async def remove(ctx: HandlerContext, params: p.FsRemoveParams) -> rf.FsRemoveResponse:
    recursive = params.recursive is not False
    path = _checked(params.path, Need.WRITE, entry=True, tree=recursive)

    force = params.force is not False  # Codex defaults force to true: a missing path is fine
    await _run(lambda: remove_path(path, recursive=recursive, force=force))
    return rf.FsRemoveResponse()


async def copy(ctx: HandlerContext, params: p.FsCopyParams) -> rf.FsCopyResponse:
    source = _checked(params.source_path, Need.READ, tree=params.recursive)
    dest = _checked(params.destination_path, Need.WRITE)

    def work() -> None:
        if source.is_dir():
            if not params.recursive:
                raise IsADirectoryError(21, "Is a directory")
            shutil.copytree(source, dest, symlinks=True)
        else:
            shutil.copy2(source, dest)

    try:
        await asyncio.to_thread(work)
    except IsADirectoryError:
        raise InvalidRequest("fs/copy requires recursive: true when sourcePath is a directory") from None
    except OSError as exc:
        raise _os_error(exc) from None
    return rf.FsCopyResponse()


async def watch(ctx: HandlerContext, params: p.FsWatchParams) -> rf.FsWatchResponse:
    path = _checked(params.path, Need.READ)
    conn = ctx.services.surface.conn(ctx.session)
    if params.watch_id in conn.watches:
        raise InvalidRequest(f"watchId already exists: {params.watch_id}")
    conn.watches[params.watch_id] = asyncio.create_task(_watch_loop(ctx.session, params.watch_id, path))
    return rf.FsWatchResponse(path=str(path))


async def _watch_loop(session: Session, watch_id: str, path: Path) -> None:
    # A path that does not exist yet (Codex accepts those) is watched through its nearest existing
    # ancestor, reporting only changes at or below it. Cancelling the task (fs/unwatch, connection
    # close) ends awatch and its watcher thread.
    root = next((p for p in (path, *path.parents) if p.exists()), path)
    prefix = str(path).rstrip("/") + "/"
    try:
        async for changes in watchfiles.awatch(root, debounce=200, step=50, recursive=True):
            changed = sorted({c for _, c in changes if c == str(path) or c.startswith(prefix)})
            if not changed:
                continue
            await session.notify("fs/changed", {"watchId": watch_id, "changedPaths": changed})
    except OSError as exc:  # the watched path went away or the watcher could not start
        logger.info("fs/watch %s on %s stopped: %s", watch_id, path, exc)


async def unwatch(ctx: HandlerContext, params: p.FsUnwatchParams) -> rf.FsUnwatchResponse:
    task = ctx.services.surface.conn(ctx.session).watches.pop(params.watch_id, None)
    if task is not None:
        task.cancel()
    return rf.FsUnwatchResponse()
