"""command/exec (+ write, terminate, resize) and process/spawn (+ writeStdin, kill, resizePty).

Children run through ``pycodex.platform.spawn`` in their own process group, with pipes or a pty, and
command/exec under the Landlock sandbox of its ``sandboxPolicy`` (default: the configured sandbox mode).
command/exec answers when the child exits (a ``Deferred`` response, so follow-up requests are served
meanwhile); process/spawn answers at once and reports the exit as ``process/exited``. Both are
connection-scoped: closing the connection kills the children."""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import os
import signal
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from app_server.context import HandlerContext
from app_server.protocol import responses_fs as rf
from app_server.protocol import surface as p
from app_server.protocol.base import to_wire
from app_server.protocol.common import WorkspaceWriteSandboxPolicy
from app_server.session import Deferred
from app_server.surface_state import RunningProcess
from app_server.tools.sandbox import make_sandbox
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InternalError, InvalidParams, InvalidRequest
from pycodex.platform.spawn import SpawnError, SpawnRequest, os_error_text, spawn

__all__ = [
    "command_exec", "command_resize", "command_terminate", "command_write", "process_kill",
    "process_resize", "process_spawn", "process_write",
]

Emit = Callable[[str, bytes, bool], Awaitable[None]]  # stream, chunk, capReached

DEFAULT_TIMEOUT_MS = 10_000
DEFAULT_OUTPUT_CAP = 1024 * 1024
TIMEOUT_EXIT_CODE = 124
_SANDBOX_MODES = {"dangerFullAccess": "danger-full-access", "readOnly": "read-only",
                  "workspaceWrite": "workspace-write", "externalSandbox": "danger-full-access"}


#: After the leader exits, its pipes are read for as long as output keeps coming; once a window this long
#: passes with no chunk read and no notification being sent, what is left open belongs to a background child
#: (``sh -c "sleep 30 &"``) and is abandoned.
QUIET_S = 0.25
#: A background child that never stops writing cannot hold the exit back for longer than this.
DRAIN_AFTER_EXIT_MAX_S = 10.0


@dataclass
class _Capture:
    cap: int | None
    data: dict[str, bytearray] = field(default_factory=lambda: {"stdout": bytearray(), "stderr": bytearray()})
    capped: dict[str, bool] = field(default_factory=lambda: {"stdout": False, "stderr": False})
    #: Chunks read so far and notifications being sent now: the drain's measure of progress.
    reads: int = 0
    emitting: int = 0
    #: The drain after exit gave up with output still flowing (``outputDrainTimedOut``).
    drain_timed_out: bool = False


def _env(overrides: Mapping[str, str | None] | None) -> dict[str, str]:
    env = dict(os.environ)
    for key, value in (overrides or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


async def _pump(running: RunningProcess, stream: str, capture: _Capture, emit: Emit | None) -> None:
    name = "stdout" if stream == "pty" else stream
    while data := await running.spawned.read_chunk(stream, 8192):
        capture.reads += 1
        if capture.capped[name]:
            continue  # keep draining so the child never blocks on a full pipe
        if capture.cap is not None and len(capture.data[name]) + len(data) >= capture.cap:
            data = data[: capture.cap - len(capture.data[name])]
            capture.capped[name] = True
        capture.data[name] += data
        if emit is not None and (data or capture.capped[name]):
            capture.emitting += 1
            try:
                await emit(name, data, capture.capped[name])
            finally:
                capture.emitting -= 1


async def _run(running: RunningProcess, capture: _Capture, emit: Emit | None, timeout_ms: int | None) -> int:
    """Wait for the child (killing its group at the timeout) and for its output; the exit code."""
    spawned = running.spawned
    pumps = [asyncio.create_task(_pump(running, s, capture, emit)) for s in spawned.streams]
    try:
        try:
            code = await asyncio.wait_for(spawned.wait(), None if timeout_ms is None else timeout_ms / 1000)
        except TimeoutError:
            spawned.signal_group(signal.SIGKILL)
            await spawned.wait()
            code = TIMEOUT_EXIT_CODE
        await _drain(pumps, capture)
        return code
    finally:
        for pump in pumps:
            pump.cancel()
        # A cancelled pump may be mid-notification: wait until it is gone, so that no output notification can
        # follow the exit the caller reports next.
        await asyncio.gather(*pumps, return_exceptions=True)
        spawned.close_pty()
        if spawned.returncode is None:
            spawned.signal_group(signal.SIGKILL)


async def _drain(pumps: list[asyncio.Task[None]], capture: _Capture) -> None:
    """Let the pumps read and forward what the exited leader left in its pipes, however long that takes.

    Not a fixed grace (under load one could expire before a pump had even run): a pump stops being waited
    for only once a whole quiet window passed in which no pump read a chunk or was sending one. When the
    process regains the CPU after a stall, the event loop runs the readable pipes' callbacks before the
    window's timer, so data already in a pipe is read before the window is judged quiet.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DRAIN_AFTER_EXIT_MAX_S
    pending = set(pumps)
    while pending:
        reads = capture.reads
        _, pending = await asyncio.wait(pending, timeout=QUIET_S)
        if pending and capture.reads == reads and not capture.emitting:
            return  # quiet: what still holds a pipe open is a background child
        if pending and loop.time() >= deadline:
            capture.drain_timed_out = True
            return


async def _start(argv: list[str], cwd: Path, env: dict[str, str], *, tty: bool, stdin: bool,
                 size: p.TerminalSize | None, what: str) -> RunningProcess:
    if not argv:
        raise InvalidRequest("command must not be empty")
    try:
        spawned = await spawn(SpawnRequest(argv, cwd, env, tty=tty, pipe_stdin=stdin and not tty))
    except (SpawnError, OSError) as exc:
        cause = exc.__cause__ if isinstance(exc, SpawnError) else exc
        detail = os_error_text(cause) if isinstance(cause, OSError) else str(exc)
        raise InternalError(f"failed to spawn {what}: {detail}") from None
    if size is not None and tty:
        spawned.resize_pty(size.rows, size.cols)
    return RunningProcess(spawned, stream_stdin=stdin or tty, tty=tty)


def _decode(delta: str | None, method: str) -> bytes:
    try:
        return base64.b64decode(delta or "", validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidParams(f"{method} requires valid base64 deltaBase64: {exc}") from None


def _check_write(delta: str | None, close: bool, method: str) -> None:
    """A write must carry data or close stdin; checked before the process is looked up, as Codex does."""
    if delta is None and not close:
        raise InvalidParams(f"{method} requires deltaBase64 or closeStdin")


async def _write(running: RunningProcess, delta: str | None, close: bool, method: str) -> None:
    if not running.stream_stdin:
        raise InvalidRequest("stdin streaming is not enabled for this process")
    data = _decode(delta, method)
    if data:
        await running.spawned.write_stdin(data)
    if close:
        if running.tty:
            await running.spawned.write_stdin(b"\x04")  # EOF at the start of a terminal line
        else:
            running.spawned.close_stdin()


def _resize(running: RunningProcess, rows: int, cols: int) -> None:
    if not running.spawned.resize_pty(rows, cols):
        raise InvalidRequest("failed to resize PTY: process is not attached to a PTY")


# -- command/exec ------------------------------------------------------------------------------


def _sandboxed(ctx: HandlerContext, params: p.CommandExecParams, argv: list[str], cwd: Path) -> list[str]:
    policy = params.sandbox_policy
    if params.permission_profile is not None and policy is not None:
        raise InvalidRequest("`permissionProfile` cannot be combined with `sandboxPolicy`")
    roots: list[str] = []
    if policy is not None:
        mode = _SANDBOX_MODES[policy.type]
        roots = [str(r) for r in policy.writable_roots] if isinstance(policy, WorkspaceWriteSandboxPolicy) else []
        if any(not Path(root).is_absolute() for root in roots):  # relative to what? Codex refuses them too
            raise InvalidRequest("Invalid request: AbsolutePathBuf deserialized without a base path")
    elif params.permission_profile is not None:
        mode = {":danger-full-access": "danger-full-access", ":workspace": "workspace-write"}.get(
            params.permission_profile, "read-only")
    else:
        mode = ctx.services.config.sandbox_mode or "read-only"
    sandbox = make_sandbox(mode, cwd, roots)
    return sandbox.wrap(argv) if sandbox is not None else argv


async def command_exec(ctx: HandlerContext, params: p.CommandExecParams) -> Deferred:
    streaming = params.tty or params.stream_stdin or params.stream_stdout_stderr
    if streaming and params.process_id is None:
        raise InvalidRequest("command/exec tty or streaming requires a client-supplied processId")
    if params.size is not None and not params.tty:
        raise InvalidParams("command/exec size requires tty: true")
    if params.disable_timeout and params.timeout_ms is not None:
        raise InvalidParams("command/exec cannot set both timeoutMs and disableTimeout")
    if params.disable_output_cap and params.output_bytes_cap is not None:
        raise InvalidParams("command/exec cannot set both outputBytesCap and disableOutputCap")
    conn = ctx.services.surface.conn(ctx.session)
    if params.process_id is not None and params.process_id in conn.commands:
        raise InvalidRequest(f"duplicate active command/exec process id: {params.process_id!r}")
    if not params.command:
        raise InvalidRequest("command must not be empty")
    cwd = Path(params.cwd) if params.cwd else ctx.services.working_dir()
    argv = _sandboxed(ctx, params, list(params.command), cwd)
    running = await _start(argv, cwd, _env(params.env), tty=params.tty, stdin=params.stream_stdin,
                           size=params.size, what="command")
    key = params.process_id if params.process_id is not None else f"internal-{id(running)}"
    conn.commands[key] = running
    capture = _Capture(None if params.disable_output_cap else (params.output_bytes_cap or DEFAULT_OUTPUT_CAP))
    timeout = None if params.disable_timeout else (params.timeout_ms or DEFAULT_TIMEOUT_MS)
    emit: Emit | None = None
    if params.tty or params.stream_stdout_stderr:
        async def emit(stream: str, data: bytes, capped: bool) -> None:
            await ctx.session.notify("command/exec/outputDelta", {
                "processId": params.process_id, "stream": stream,
                "deltaBase64": base64.b64encode(data).decode(), "capReached": capped})

    async def finish() -> JsonObj:
        try:
            code = await _run(running, capture, emit, timeout)
        finally:
            conn.commands.pop(key, None)
        streamed = emit is not None
        return to_wire(rf.CommandExecResponse(
            exit_code=code,
            stdout="" if streamed else capture.data["stdout"].decode("utf-8", "replace"),
            stderr="" if streamed else capture.data["stderr"].decode("utf-8", "replace"),
        ))

    return Deferred(finish())


def _command(ctx: HandlerContext, process_id: str) -> RunningProcess:
    running = ctx.services.surface.conn(ctx.session).commands.get(process_id)
    if running is None:
        raise InvalidRequest(f'no active command/exec for process id "{process_id}"')
    return running


async def command_write(ctx: HandlerContext, params: p.CommandExecWriteParams) -> rf.CommandExecWriteResponse:
    _check_write(params.delta_base64, params.close_stdin, "command/exec/write")
    await _write(_command(ctx, params.process_id), params.delta_base64, params.close_stdin,
                 "command/exec/write")
    return rf.CommandExecWriteResponse()


async def command_terminate(ctx: HandlerContext, params: p.CommandExecTerminateParams) -> rf.CommandExecTerminateResponse:
    _command(ctx, params.process_id).spawned.signal_group(signal.SIGKILL)
    return rf.CommandExecTerminateResponse()


async def command_resize(ctx: HandlerContext, params: p.CommandExecResizeParams) -> rf.CommandExecResizeResponse:
    _resize(_command(ctx, params.process_id), params.size.rows, params.size.cols)
    return rf.CommandExecResizeResponse()


# -- process/spawn -----------------------------------------------------------------------------


async def process_spawn(ctx: HandlerContext, params: p.ProcessSpawnParams) -> rf.ProcessSpawnResponse:
    cwd = Path(params.cwd)
    if not cwd.is_absolute():
        raise InvalidRequest("Invalid request: AbsolutePathBuf deserialized without a base path")
    if params.size is not None and not params.tty:
        raise InvalidParams("process/spawn size requires tty: true")
    conn = ctx.services.surface.conn(ctx.session)
    handle = params.process_handle
    if handle in conn.processes:
        raise InvalidRequest(f"duplicate active process handle: {handle!r}")
    running = await _start(list(params.command), cwd, _env(params.env), tty=params.tty,
                           stdin=params.stream_stdin, size=params.size, what="process")
    conn.processes[handle] = running
    capture = _Capture(params.output_bytes_cap if "output_bytes_cap" in params.model_fields_set
                       else DEFAULT_OUTPUT_CAP)
    streamed = params.tty or params.stream_stdout_stderr
    emit: Emit | None = None
    if streamed:
        async def emit(stream: str, data: bytes, capped: bool) -> None:
            await ctx.session.notify("process/outputDelta", {
                "processHandle": handle, "stream": stream,
                "deltaBase64": base64.b64encode(data).decode(), "capReached": capped})

    async def watch() -> None:
        try:
            code = await _run(running, capture, emit, params.timeout_ms)
        finally:
            conn.processes.pop(handle, None)
        out = {s: "" if streamed else capture.data[s].decode("utf-8", "replace") for s in ("stdout", "stderr")}
        with contextlib.suppress(Exception):
            await ctx.session.notify("process/exited", {
                "processHandle": handle, "exitCode": code, "outputDrainTimedOut": capture.drain_timed_out,
                "stdout": out["stdout"], "stdoutCapReached": capture.capped["stdout"],
                "stderr": out["stderr"], "stderrCapReached": capture.capped["stderr"]})

    running.task = ctx.services.spawn(watch(), name=f"process {handle}")
    return rf.ProcessSpawnResponse()


def _process(ctx: HandlerContext, handle: str) -> RunningProcess:
    running = ctx.services.surface.conn(ctx.session).processes.get(handle)
    if running is None:
        raise InvalidRequest(f'no active process for process handle "{handle}"')
    return running


async def process_write(ctx: HandlerContext, params: p.ProcessWriteStdinParams) -> rf.ProcessWriteStdinResponse:
    _check_write(params.delta_base64, params.close_stdin, "process/writeStdin")
    await _write(_process(ctx, params.process_handle), params.delta_base64, params.close_stdin,
                 "process/writeStdin")
    return rf.ProcessWriteStdinResponse()


async def process_kill(ctx: HandlerContext, params: p.ProcessKillParams) -> rf.ProcessKillResponse:
    _process(ctx, params.process_handle).spawned.signal_group(signal.SIGKILL)
    return rf.ProcessKillResponse()


async def process_resize(ctx: HandlerContext, params: p.ProcessResizePtyParams) -> rf.ProcessResizePtyResponse:
    _resize(_process(ctx, params.process_handle), params.size.rows, params.size.cols)
    return rf.ProcessResizePtyResponse()
