"""Responses of the file, command, process and fuzzy-file-search methods (`fs/*`, `command/exec*`,
`process/*`, `fuzzyFileSearch*`).

Field names and types follow Codex 0.169's response schema; field order is the order the handlers emit
(Codex's where recorded). Built with ``Model.model_validate(handler_dict)``; ``to_wire`` gives the dict back.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import WireModel

FuzzyFileSearchMatchType = Literal["file", "directory"]


class FsReadFileResponse(WireModel):
    """Base64-encoded file contents returned by `fs/readFile`."""

    data_base64: str


class FsWriteFileResponse(WireModel):
    """Successful response for `fs/writeFile`."""


class FsCreateDirectoryResponse(WireModel):
    """Successful response for `fs/createDirectory`."""


class FsGetMetadataResponse(WireModel):
    """Metadata returned by `fs/getMetadata`."""

    is_directory: bool
    is_file: bool
    is_symlink: bool
    created_at_ms: int
    modified_at_ms: int


class FsReadDirectoryEntry(WireModel):
    """A directory entry returned by `fs/readDirectory`."""

    file_name: str
    is_directory: bool
    is_file: bool


class FsReadDirectoryResponse(WireModel):
    """Directory entries returned by `fs/readDirectory`."""

    entries: list[FsReadDirectoryEntry]


class FsRemoveResponse(WireModel):
    """Successful response for `fs/remove`."""


class FsCopyResponse(WireModel):
    """Successful response for `fs/copy`."""


class FsWatchResponse(WireModel):
    """Successful response for `fs/watch`."""

    path: str


class FsUnwatchResponse(WireModel):
    """Successful response for `fs/unwatch`."""


class CommandExecResponse(WireModel):
    """Final buffered result for `command/exec`."""

    exit_code: int
    stdout: str
    stderr: str


class CommandExecWriteResponse(WireModel):
    """Empty success response for `command/exec/write`."""


class CommandExecTerminateResponse(WireModel):
    """Empty success response for `command/exec/terminate`."""


class CommandExecResizeResponse(WireModel):
    """Empty success response for `command/exec/resize`."""


class ProcessSpawnResponse(WireModel):
    """Successful response for `process/spawn`."""


class ProcessWriteStdinResponse(WireModel):
    """Empty success response for `process/writeStdin`."""


class ProcessKillResponse(WireModel):
    """Empty success response for `process/kill`."""


class ProcessResizePtyResponse(WireModel):
    """Empty success response for `process/resizePty`."""


class FuzzyFileSearchResult(WireModel):
    """One match of `fuzzyFileSearch` (a superset of Codex's `codex_file_search::FileMatch`; snake_case keys)."""

    root: str
    path: str
    match_type: FuzzyFileSearchMatchType = Field(alias="match_type")
    file_name: str = Field(alias="file_name")
    score: int
    indices: list[int] | None = None


class FuzzyFileSearchResponse(WireModel):
    """The result of `fuzzyFileSearch`."""

    files: list[FuzzyFileSearchResult]


class FuzzyFileSearchSessionStartResponse(WireModel):
    """The result of `fuzzyFileSearch/sessionStart`."""


class FuzzyFileSearchSessionUpdateResponse(WireModel):
    """The result of `fuzzyFileSearch/sessionUpdate`."""


class FuzzyFileSearchSessionStopResponse(WireModel):
    """The result of `fuzzyFileSearch/sessionStop`."""
