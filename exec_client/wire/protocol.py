"""Wire models of the Codex exec-server protocol (0.169.0), shared by our client and our server.

Field names are camelCase on the wire. Request params ignore unknown members (as serde does by
default); paths are ``file://`` URIs kept as strings here, converted by ``uri_to_path``/``path_to_uri``.
Method names live in ``Method`` so that neither side spells them twice. The base models live in
:mod:`exec_client.wire.wire_model` and the ``fs/*`` models in :mod:`exec_client.wire.fs_protocol`; both are
re-exported here, so either side imports the whole protocol from this module.
"""

from __future__ import annotations

import base64
import binascii
from typing import Literal

from pydantic import Field

from exec_client.wire import MAX_CHUNK_BYTES, b64
from exec_client.wire.fs_protocol import (
    FsCloseParams,
    FsCopyParams,
    FsCreateDirectoryParams,
    FsDirectoryEntry,
    FsMetadata,
    FsOpenParams,
    FsPathParams,
    FsReadBlockParams,
    FsReadDirectoryResult,
    FsReadFileResult,
    FsRemoveParams,
    FsWalkParams,
    FsWatchMissingParams,
    FsWriteBlockParams,
    FsWriteFileParams,
    WalkOptions,
)
from exec_client.wire.uris import FileUri, InvalidUri, path_to_uri, uri_to_path
from exec_client.wire.wire_model import StrictWire, WireModel
from pycodex.json_types import JsonObj

__all__ = [
    "MAX_CHUNK_BYTES",
    "EnvironmentInfo",
    "FileUri",
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
    "HttpHeader",
    "HttpRequestParams",
    "InitializeParams",
    "InitializeResult",
    "InvalidUri",
    "Method",
    "ProcessChunk",
    "ProcessClosed",
    "ProcessExited",
    "ProcessIdParams",
    "ProcessOutput",
    "ProcessReadParams",
    "ProcessReadResult",
    "ProcessSignalParams",
    "ProcessStartParams",
    "ProcessStartResult",
    "ProcessTerminateResult",
    "ProcessWriteParams",
    "ProcessWriteResult",
    "Shell",
    "StrictWire",
    "WalkOptions",
    "WireModel",
    "b64decode_strict",
    "b64encode",
    "path_to_uri",
    "uri_to_path",
]


Stream = Literal["stdout", "stderr", "pty"]
WriteStatus = Literal["accepted", "unknownProcess", "stdinClosed", "starting"]


class Method:
    """The exec-server's method and notification names."""

    INITIALIZE = "initialize"
    INITIALIZED = "initialized"
    ENVIRONMENT_INFO = "environment/info"
    ENVIRONMENT_STATUS = "environment/status"
    PROCESS_START = "process/start"
    PROCESS_READ = "process/read"
    PROCESS_WRITE = "process/write"
    PROCESS_SIGNAL = "process/signal"
    PROCESS_TERMINATE = "process/terminate"
    PROCESS_OUTPUT = "process/output"
    PROCESS_EXITED = "process/exited"
    PROCESS_CLOSED = "process/closed"
    FS_READ_FILE = "fs/readFile"
    FS_WRITE_FILE = "fs/writeFile"
    FS_CREATE_DIRECTORY = "fs/createDirectory"
    FS_GET_METADATA = "fs/getMetadata"
    FS_READ_DIRECTORY = "fs/readDirectory"
    FS_CANONICALIZE = "fs/canonicalize"
    FS_COPY = "fs/copy"
    FS_REMOVE = "fs/remove"


# -- lifecycle ---------------------------------------------------------------------------------
class InitializeParams(StrictWire):
    """``initialize``: the client's name and, to resume a detached session, its id."""

    client_name: str
    resume_session_id: str | None = None


class Shell(WireModel):
    """The executor's default shell."""

    name: str
    path: str


class EnvironmentInfo(WireModel):
    """What the executor says about its machine: shell, version, provider id, OS and directories."""

    shell: Shell
    executor_version: str
    provider_id: str
    cwd: str
    user_home_dir: str
    platform_os: str
    prepend_path_dirs: list[str] = Field(default_factory=list)
    temporary_directories: list[str] = Field(default_factory=list)
    temp_dir: str
    capabilities: dict[str, bool] = Field(default_factory=dict)


class InitializeResult(WireModel):
    """The answer to ``initialize``: the session id and the environment's description."""

    session_id: str
    environment_info: EnvironmentInfo


# -- processes ---------------------------------------------------------------------------------
class ProcessStartParams(StrictWire):
    """``process/start``: the process id chosen by the client, argv, cwd, env policy, tty and sandbox."""

    process_id: str
    argv: list[str]
    cwd: FileUri
    env: dict[str, str]
    tty: bool
    arg0: str | None = None
    pipe_stdin: bool = False
    env_policy: JsonObj | None = None
    sandbox: JsonObj | None = None
    metadata: JsonObj | None = None


class ProcessStartResult(WireModel):
    """The answer to ``process/start``: the process id and the sandbox applied."""

    process_id: str
    sandbox_type: str = "none"


class ProcessIdParams(StrictWire):
    """Params naming one process (``process/terminate``)."""

    process_id: str


class ProcessReadParams(StrictWire):
    """``process/read``: events after ``afterSeq``, up to ``maxBytes``, waiting up to ``waitMs``."""

    process_id: str
    after_seq: int | None = None
    max_bytes: int | None = None
    wait_ms: int | None = None


class ProcessChunk(WireModel):
    """One output chunk in a ``process/read`` answer."""

    seq: int
    stream: Stream
    chunk: str

    @property
    def data(self) -> bytes:
        """The chunk's bytes (decoded from base64)."""
        return b64.decode(self.chunk)


class ProcessReadResult(WireModel):
    """The answer to ``process/read``: chunks, the next sequence to ask for and the process's end state."""

    chunks: list[ProcessChunk]
    next_seq: int
    exited: bool
    exit_code: int | None
    closed: bool
    failure: str | None = None
    sandbox_denied: bool = False


class ProcessWriteParams(StrictWire):
    """``process/write``: base64 bytes for the process's stdin."""

    process_id: str
    chunk: str
    write_id: str


class ProcessWriteResult(WireModel):
    """The answer to ``process/write``."""

    status: WriteStatus


class ProcessSignalParams(StrictWire):
    """``process/signal``: only ``interrupt`` is defined."""

    process_id: str
    signal: Literal["interrupt"]


class ProcessTerminateResult(WireModel):
    """The answer to ``process/terminate``: whether the process was still running."""

    running: bool


class ProcessOutput(WireModel):
    """The ``process/output`` notification: one chunk of output with its sequence number."""

    process_id: str
    seq: int
    stream: Stream
    chunk: str

    @property
    def data(self) -> bytes:
        """The chunk's bytes (decoded from base64)."""
        return b64.decode(self.chunk)


class ProcessExited(WireModel):
    """The ``process/exited`` notification: the leader exited with ``exitCode``."""

    process_id: str
    seq: int
    exit_code: int
    sandbox_denied: bool = False


class ProcessClosed(WireModel):
    """The ``process/closed`` notification: all output was delivered; no event follows."""

    process_id: str
    seq: int


# -- http ------------------------------------------------------------------------------------------
class HttpHeader(StrictWire):
    """One HTTP header of an ``http/request``."""

    name: str
    value: str


class HttpRequestParams(StrictWire):
    """``http/request``: an HTTP request the executor makes on the client's behalf, streamed if asked."""

    method: str
    url: str
    headers: list[HttpHeader] = Field(default_factory=list)
    body_base64: str | None = None
    timeout_ms: int | None = None
    redirect_policy: Literal["follow", "stop"] | None = None
    request_id: str
    stream_response: bool = False


# -- helpers -----------------------------------------------------------------------------------
def b64encode(data: bytes) -> str:
    """Standard padded base64 as text."""
    return b64.encode(data).decode("ascii")


def b64decode_strict(text: str) -> bytes:
    """Decode standard padded base64, refusing stray characters (Codex answers those with -32602)."""
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"invalid base64: {exc}") from exc
