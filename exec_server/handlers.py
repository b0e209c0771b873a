"""Method table of the exec-server: params model, the family used in gating messages, handler.

Handlers take the connection's session and validated params and return the JSON result, or raise an
``RpcError``. Lifecycle (initialize/initialized) is the connection's business, not theirs.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from pydantic import BaseModel

from exec_client.wire import protocol as p
from exec_server import fs_copy, fs_extra, fs_service, http_service
from exec_server.info import environment_info
from exec_server.sandbox import SANDBOX_TYPE, UnsupportedSandbox, plan_sandbox, preexec_for
from exec_server.session import Session
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InternalError, InvalidParams
from pycodex.platform.spawn import SpawnError, SpawnRequest, spawn

__all__ = ["METHODS", "MethodSpec", "ServedMethod", "ThenRun", "build_env"]


@dataclass(frozen=True, slots=True)
class ThenRun:
    """A result plus work that must start only after the response went out (e.g. body deltas)."""

    result: JsonObj
    after: Callable[[], Coroutine[object, object, None]]


#: The params model of one method.
P = TypeVar("P", bound=BaseModel)
#: What a handler returns: the JSON result, or a result plus work to start once it went out.
Outcome = JsonObj | ThenRun

#: Variables kept by ``envPolicy.inherit == "core"``.
_CORE_VARS = ("HOME", "LOGNAME", "PATH", "SHELL", "USER", "USERNAME", "TMPDIR", "TEMP", "TMP")
#: Dropped unless ``ignoreDefaultExcludes`` (Codex's default secret filter).
_DEFAULT_EXCLUDES = ("*KEY*", "*SECRET*", "*TOKEN*")
#: ``process/read`` long-polls are capped so a request never holds the connection forever.
MAX_WAIT_MS = 60_000


class _NoParams(BaseModel):
    pass


class ServedMethod(Protocol):
    """A row of ``METHODS`` as the router sees it, whatever its params model."""

    @property
    def family(self) -> str:
        """The method family the gate's errors name (``exec``, ``filesystem`` ...)."""
        ...

    @property
    def model(self) -> type[BaseModel]:
        """The params model the router validates into."""
        ...

    async def call(self, session: Session, params: BaseModel) -> Outcome:
        """Run the handler on params the router validated into ``model``."""
        ...


@dataclass(frozen=True, slots=True)
class MethodSpec(Generic[P]):
    """One served method: its family (named in the gate's errors), params model and handler."""

    family: str
    model: type[P]
    handler: Callable[[Session, P], Awaitable[Outcome]]

    async def call(self, session: Session, params: BaseModel) -> Outcome:
        """Run the handler on params the router validated into ``model``."""
        assert isinstance(params, self.model)  # the router parsed them with this very model
        return await self.handler(session, params)


def _matches(name: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(name.upper(), pat.upper()) for pat in patterns)


def build_env(env: dict[str, str], policy: JsonObj | None) -> dict[str, str]:
    """Without a policy the child gets exactly ``env``; with one, the policy applies, then ``env``."""
    if policy is None:
        return dict(env)
    inherit = policy.get("inherit", "all")
    if inherit == "all":
        base = dict(os.environ)
    elif inherit == "core":
        base = {k: v for k, v in os.environ.items() if k in _CORE_VARS}
    else:
        base = {}
    if not policy.get("ignoreDefaultExcludes", False):
        base = {k: v for k, v in base.items() if not _matches(k, list(_DEFAULT_EXCLUDES))}
    exclude = [str(x) for x in policy.get("exclude") or []]
    base = {k: v for k, v in base.items() if not _matches(k, exclude)}
    base.update({str(k): str(v) for k, v in (policy.get("set") or {}).items()})
    include_only = [str(x) for x in policy.get("includeOnly") or []]
    if include_only:
        base = {k: v for k, v in base.items() if _matches(k, include_only)}
    base.update(env)
    return base


# -- environment -------------------------------------------------------------------------------
async def _info(session: Session, params: _NoParams) -> JsonObj:
    return environment_info()


async def _status(session: Session, params: _NoParams) -> JsonObj:
    return {"status": "ready"}


# -- processes ---------------------------------------------------------------------------------
async def _start(session: Session, params: p.ProcessStartParams) -> JsonObj:
    if not params.argv:
        raise InvalidParams("argv must not be empty")
    try:
        cwd = p.uri_to_path(params.cwd)
    except ValueError as exc:
        raise InvalidParams(str(exc)) from exc
    session.check_capacity(params.process_id)
    confine = None
    sandbox_type = "none"
    if params.sandbox is not None:
        try:
            plan = plan_sandbox(params.sandbox)
        except UnsupportedSandbox as exc:
            if not session.limits.allow_unsandboxed:
                # Fail closed: running a command meant to be confined without confinement is worse
                # than not running it.
                raise InternalError(
                    f"cannot apply the requested sandbox: {exc}; start the exec-server with "
                    "--allow-unsandboxed to run such commands without one"
                ) from exc
        else:
            confine = preexec_for(plan)
            if confine is not None:
                sandbox_type = SANDBOX_TYPE
    request = SpawnRequest(
        argv=params.argv,
        cwd=cwd,
        env=build_env(params.env, params.env_policy),
        tty=params.tty,
        pipe_stdin=params.pipe_stdin,
        arg0=params.arg0,
        confine=confine,
    )
    try:
        spawned = await spawn(request)
    except SpawnError as exc:
        raise InternalError(exc.message) from exc
    session.add(params.process_id, spawned, params.tty)
    return {"processId": params.process_id, "sandboxType": sandbox_type}


async def _read(session: Session, params: p.ProcessReadParams) -> JsonObj:
    proc = session.get(params.process_id)
    after = params.after_seq or 0
    wait_ms = min(max(params.wait_ms or 0, 0), MAX_WAIT_MS)
    await proc.wait_for_news(after, wait_ms / 1000)
    got = proc.log.read(params.after_seq, params.max_bytes)
    return {
        "chunks": [{"seq": c.seq, "stream": c.stream, "chunk": p.b64encode(c.data)} for c in got.chunks],
        "nextSeq": got.next_seq,
        "exited": got.exited,
        "exitCode": got.exit_code,
        "closed": got.closed,
        "failure": None,
        "sandboxDenied": False,
    }


async def _write(session: Session, params: p.ProcessWriteParams) -> JsonObj:
    try:
        data = p.b64decode_strict(params.chunk)
    except ValueError as exc:
        raise InvalidParams(str(exc)) from exc
    proc = session.processes.get(params.process_id)
    if proc is None:
        return {"status": "unknownProcess"}
    return {"status": await proc.write(data)}


async def _signal(session: Session, params: p.ProcessSignalParams) -> JsonObj:
    proc = session.processes.get(params.process_id)
    if proc is not None:
        proc.interrupt()
    return {}


async def _terminate(session: Session, params: p.ProcessIdParams) -> JsonObj:
    proc = session.processes.get(params.process_id)
    return {"running": proc.terminate() if proc is not None else False}


# -- filesystem --------------------------------------------------------------------------------
def _fs(fn: Callable[[P], Awaitable[JsonObj]]) -> Callable[[Session, P], Awaitable[Outcome]]:
    async def handler(session: Session, params: P) -> JsonObj:
        return await fn(params)

    return handler


async def _open(session: Session, params: p.FsOpenParams) -> JsonObj:
    return await session.files.open(params)


async def _read_block(session: Session, params: p.FsReadBlockParams) -> JsonObj:
    return await session.files.read_block(params)


async def _write_block(session: Session, params: p.FsWriteBlockParams) -> JsonObj:
    return await session.files.write_block(params)


async def _close(session: Session, params: p.FsCloseParams) -> JsonObj:
    return await session.files.close(params)


async def _watch_missing(session: Session, params: p.FsWatchMissingParams) -> JsonObj:
    return await session.watches.watch(params, session.notify)


async def _http(session: Session, params: p.HttpRequestParams) -> JsonObj | ThenRun:
    result, after = await http_service.perform(params, session.notify)
    return result if after is None else ThenRun(result, after)


def _spec(
    family: str, model: type[P], handler: Callable[[Session, P], Awaitable[Outcome]]
) -> ServedMethod:
    # A function rather than ``MethodSpec(...)`` in the table: it binds ``P`` from the model and the
    # handler, where the table's value type would make mypy infer ``BaseModel`` for every row.
    return MethodSpec(family, model, handler)


_ENV_INFO, _ENV_STATUS, _EXEC, _FS = "environment info", "environment status", "exec", "filesystem"

METHODS: dict[str, ServedMethod] = {
    p.Method.ENVIRONMENT_INFO: _spec(_ENV_INFO, _NoParams, _info),
    p.Method.ENVIRONMENT_STATUS: _spec(_ENV_STATUS, _NoParams, _status),
    p.Method.PROCESS_START: _spec(_EXEC, p.ProcessStartParams, _start),
    p.Method.PROCESS_READ: _spec(_EXEC, p.ProcessReadParams, _read),
    p.Method.PROCESS_WRITE: _spec(_EXEC, p.ProcessWriteParams, _write),
    p.Method.PROCESS_SIGNAL: _spec(_EXEC, p.ProcessSignalParams, _signal),
    p.Method.PROCESS_TERMINATE: _spec(_EXEC, p.ProcessIdParams, _terminate),
    p.Method.FS_READ_FILE: _spec(_FS, p.FsPathParams, _fs(fs_service.read_file)),
    p.Method.FS_WRITE_FILE: _spec(_FS, p.FsWriteFileParams, _fs(fs_service.write_file)),
    p.Method.FS_CREATE_DIRECTORY: _spec(
        _FS, p.FsCreateDirectoryParams, _fs(fs_service.create_directory)
    ),
    p.Method.FS_GET_METADATA: _spec(_FS, p.FsPathParams, _fs(fs_service.get_metadata)),
    p.Method.FS_READ_DIRECTORY: _spec(_FS, p.FsPathParams, _fs(fs_service.read_directory)),
    p.Method.FS_CANONICALIZE: _spec(_FS, p.FsPathParams, _fs(fs_service.canonicalize)),
    p.Method.FS_COPY: _spec(_FS, p.FsCopyParams, _fs(fs_copy.copy)),
    p.Method.FS_REMOVE: _spec(_FS, p.FsRemoveParams, _fs(fs_service.remove)),
    "fs/walk": _spec(_FS, p.FsWalkParams, _fs(fs_extra.walk)),
    "fs/open": _spec(_FS, p.FsOpenParams, _open),
    "fs/readBlock": _spec(_FS, p.FsReadBlockParams, _read_block),
    "fs/writeBlock": _spec(_FS, p.FsWriteBlockParams, _write_block),
    "fs/close": _spec(_FS, p.FsCloseParams, _close),
    "fs/watchMissing": _spec(_FS, p.FsWatchMissingParams, _watch_missing),
    "http/request": _spec("http", p.HttpRequestParams, _http),
}
