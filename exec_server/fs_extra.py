"""The stateful and bulk file methods: ``fs/walk``, block I/O on handles, ``fs/watchMissing``.

Semantics follow Codex 0.169.0 as observed: ``fs/walk`` lists breadth-first, sorted per directory,
without the root and without symlinks unless ``followDirectorySymlinks``; ``maxDepth`` 0 means direct children; ``maxDirectories`` counts directories read and
``maxEntries`` entries returned, either limit sets ``truncated``. Handles are per session
(``file handle `h` already exists``, ``unknown file handle `h` `` as -32004). A missing-path watch
answers ``watching`` (false when nothing is missing) and later sends ``fs/missingChanged`` once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from exec_client.wire.errors import NotFound
from exec_client.wire.fs_paths import policy_for, real_path
from exec_client.wire.fs_policy import Need
from exec_client.wire.protocol import (
    FsCloseParams,
    FsOpenParams,
    FsReadBlockParams,
    FsWalkParams,
    FsWatchMissingParams,
    FsWriteBlockParams,
    b64decode_strict,
    b64encode,
    path_to_uri,
    uri_to_path,
)
from exec_server.fs_service import not_a_file, open_for_write, request_path, run_fs
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InvalidParams, InvalidRequest

__all__ = ["FileHandles", "Watches", "walk"]

Notify = Callable[[str, JsonObj], Awaitable[None]]

MAX_HANDLES = 256
MAX_WATCHES = 64
WATCH_POLL_S = 0.25
MAX_BLOCK = 16 * 1024 * 1024


async def walk(p: FsWalkParams) -> JsonObj:
    """``fs/walk``: the entries below a directory, bounded by the walk options."""
    root = request_path(p.path)
    opts = p.options

    def work() -> JsonObj:
        policy = policy_for(p.sandbox)
        policy.check(real_path(root), Need.READ)
        os.stat(root)  # a missing root is -32004, like Codex
        entries: list[dict[str, str]] = []
        seen: set[str] = {os.path.realpath(root)}
        queue: deque[tuple[Path, int]] = deque([(root, 0)] if root.is_dir() else [])
        dirs_read = 0
        while queue:
            if dirs_read >= opts.max_directories:
                return {"entries": entries, "errors": [], "truncated": True}
            directory, depth = queue.popleft()
            dirs_read += 1
            with os.scandir(directory) as it:
                children = sorted(it, key=lambda e: e.name)
            for child in children:
                if len(entries) >= opts.max_entries:
                    return {"entries": entries, "errors": [], "truncated": True}
                if child.is_symlink() and not opts.follow_directory_symlinks:
                    continue  # Codex leaves symlinks out entirely unless asked to follow them
                if policy.access(os.path.realpath(child.path)) in (None, "none"):
                    continue  # what the sandbox hides is not listed
                is_dir = child.is_dir(follow_symlinks=True)
                entries.append({"path": path_to_uri(child.path), "kind": "directory" if is_dir else "file"})
                if not is_dir or depth >= opts.max_depth:
                    continue
                real = os.path.realpath(child.path)
                if real not in seen:
                    seen.add(real)
                    queue.append((Path(child.path), depth + 1))
        return {"entries": entries, "errors": [], "truncated": False}

    return await run_fs(work)


@dataclass
class FileHandles:
    """Open files of one session, by client-chosen handle id."""

    files: dict[str, int] = field(default_factory=dict)

    async def open(self, p: FsOpenParams) -> JsonObj:
        """``fs/open``: open a file under a caller-chosen handle id (bounded in number per session)."""
        if p.handle_id in self.files:
            raise InvalidRequest(f"file handle `{p.handle_id}` already exists")
        if len(self.files) >= MAX_HANDLES:
            raise InvalidRequest(f"too many open file handles (limit {MAX_HANDLES}); close one first")
        path = request_path(p.path)

        def work() -> int:
            target = real_path(path)
            policy = policy_for(p.sandbox)
            policy.check(target, Need.WRITE if p.mode == "replace" else Need.READ)
            if p.mode == "replace":
                return open_for_write(target, path, sandboxed=policy.rules is not None, mode=0o644)
            fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                os.close(fd)
                raise not_a_file(path)  # only regular files: no fifo, device or directory
            return fd

        self.files[p.handle_id] = await run_fs(work)
        return {"handleId": p.handle_id}

    def _fd(self, handle_id: str) -> int:
        fd = self.files.get(handle_id)
        if fd is None:
            raise NotFound(f"unknown file handle `{handle_id}`")
        return fd

    async def read_block(self, p: FsReadBlockParams) -> JsonObj:
        """``fs/readBlock``: up to ``len`` bytes (capped) at ``offset`` of an open handle, base64-encoded."""
        fd = self._fd(p.handle_id)
        if p.offset < 0 or p.len < 0:
            raise InvalidParams("offset and len must not be negative")
        size = min(p.len, MAX_BLOCK)

        def work() -> tuple[bytes, bool]:
            data = os.pread(fd, size, p.offset)
            return data, p.offset + len(data) >= os.fstat(fd).st_size

        data, eof = await run_fs(work)
        return {"chunk": b64encode(data), "eof": eof}

    async def write_block(self, p: FsWriteBlockParams) -> JsonObj:
        """``fs/writeBlock``: write a base64 chunk at ``offset`` of an open handle."""
        fd = self._fd(p.handle_id)
        try:
            data = b64decode_strict(p.chunk)
        except ValueError as exc:
            raise InvalidParams(str(exc)) from exc
        await run_fs(lambda: os.pwrite(fd, data, p.offset))
        return {}

    async def close(self, p: FsCloseParams) -> JsonObj:
        """``fs/close``: close a handle; closing an unknown handle is not an error."""
        fd = self.files.pop(p.handle_id, None)
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
        return {}

    def close_all(self) -> None:
        """Close every open handle (the session ended)."""
        for fd in self.files.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self.files.clear()


def _exists(path: Path) -> bool:
    try:
        os.lstat(path)
    except OSError:
        return False
    return True


@dataclass
class Watches:
    """Polling watches for paths that do not exist yet; each fires ``fs/missingChanged`` once."""

    tasks: dict[int, asyncio.Task[None]] = field(default_factory=dict)

    async def watch(self, p: FsWatchMissingParams, notify: Notify) -> JsonObj:
        """``fs/watchMissing``: report through ``notify`` when any of the missing paths appears."""
        old = self.tasks.pop(p.watch_id, None)
        if old is not None:
            old.cancel()
        paths = [uri_to_path(u) for u in p.missing]
        missing = [path for path in paths if not _exists(path)]
        if not missing:
            return {"watching": False}
        if len(self.tasks) >= MAX_WATCHES:
            raise InvalidRequest(f"too many watches (limit {MAX_WATCHES})")
        self.tasks[p.watch_id] = asyncio.create_task(self._poll(p.watch_id, missing, notify))
        return {"watching": True}

    async def _poll(self, watch_id: int, missing: list[Path], notify: Notify) -> None:
        while not any(_exists(path) for path in missing):
            await asyncio.sleep(WATCH_POLL_S)
        self.tasks.pop(watch_id, None)
        with contextlib.suppress(ConnectionError):
            await notify("fs/missingChanged", {"watchId": watch_id})

    def cancel_all(self) -> None:
        """Stop every watch (the session ended)."""
        for task in self.tasks.values():
            task.cancel()
        self.tasks.clear()
