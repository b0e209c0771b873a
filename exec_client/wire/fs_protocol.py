"""Filesystem methods of the exec-server wire (``fs/*``): params and results, Codex 0.169.0.

Paths are ``file://`` URIs kept as strings; each request may carry the caller's sandbox context, against which
the executor checks every path. :mod:`exec_client.wire.protocol` re-exports these models, so both sides import
the whole protocol from one place.
"""

from __future__ import annotations

from typing import Literal

from exec_client.wire.sandbox_context import WireFileSystemSandboxContext
from exec_client.wire.uris import FileUri
from exec_client.wire.wire_model import StrictWire, WireModel

__all__ = [
    "FsCloseParams",
    "FsCopyParams",
    "FsCreateDirectoryParams",
    "FsDirectoryEntry",
    "FsMetadata",
    "FsOpenParams",
    "FsPathParams",
    "FsReadBlockParams",
    "FsReadDirectoryResult",
    "FsReadFileResult",
    "FsRemoveParams",
    "FsWalkParams",
    "FsWatchMissingParams",
    "FsWriteBlockParams",
    "FsWriteFileParams",
    "WalkOptions",
]


class FsPathParams(StrictWire):
    """Params naming one path, with the request's sandbox context."""

    path: FileUri
    sandbox: WireFileSystemSandboxContext | None = None


class FsReadFileResult(WireModel):
    """The answer to ``fs/readFile``."""

    data_base64: str


class FsWriteFileParams(StrictWire):
    """``fs/writeFile``: a path and its new content in base64."""

    path: FileUri
    data_base64: str
    sandbox: WireFileSystemSandboxContext | None = None


class FsCreateDirectoryParams(StrictWire):
    """``fs/createDirectory``."""

    path: FileUri
    recursive: bool = False
    sandbox: WireFileSystemSandboxContext | None = None


class FsMetadata(WireModel):
    """The answer to ``fs/getMetadata``."""

    is_directory: bool
    is_file: bool
    is_symlink: bool
    size: int
    created_at_ms: int
    modified_at_ms: int


class FsDirectoryEntry(WireModel):
    """One entry of ``fs/readDirectory``."""

    file_name: str
    is_directory: bool
    is_file: bool


class FsReadDirectoryResult(WireModel):
    """The answer to ``fs/readDirectory``."""

    entries: list[FsDirectoryEntry]


class FsCopyParams(StrictWire):
    """``fs/copy``."""

    source_path: FileUri
    destination_path: FileUri
    recursive: bool = False
    sandbox: WireFileSystemSandboxContext | None = None


class FsRemoveParams(StrictWire):
    """``fs/remove``."""

    path: FileUri
    recursive: bool = False
    force: bool = False
    sandbox: WireFileSystemSandboxContext | None = None


class WalkOptions(StrictWire):
    """Bounds of an ``fs/walk``: depth, directories, entries, and whether to follow directory symlinks."""

    max_depth: int
    max_directories: int
    max_entries: int
    follow_directory_symlinks: bool


class FsWalkParams(StrictWire):
    """``fs/walk``."""

    path: FileUri
    options: WalkOptions
    sandbox: WireFileSystemSandboxContext | None = None


class FsOpenParams(StrictWire):
    """``fs/open``: open ``path`` under the client-chosen ``handleId``."""

    handle_id: str
    path: FileUri
    mode: Literal["read", "replace"] = "read"
    sandbox: WireFileSystemSandboxContext | None = None


class FsReadBlockParams(StrictWire):
    """``fs/readBlock``: ``len`` bytes at ``offset`` of an open handle."""

    handle_id: str
    offset: int
    len: int


class FsWriteBlockParams(StrictWire):
    """``fs/writeBlock``: a base64 chunk at ``offset`` of an open handle."""

    handle_id: str
    offset: int
    chunk: str


class FsCloseParams(StrictWire):
    """``fs/close``."""

    handle_id: str


class FsWatchMissingParams(StrictWire):
    """``fs/watchMissing``: notify when any of the ``missing`` paths appears."""

    watch_id: int
    missing: list[FileUri]
    present: str | None = None
