"""One ``<bin> exec --json`` run: child stdout -> line hop (32) -> classifier -> event hop (32) -> caller.

The completion waits for the child's exit, for every buffered line to be classified, and for the caller
to have seen the end of the events (or closed them). Closing the events never kills the child; only
cancel and timeout kill its process group.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_api.bounds import bound_completion
from agent_api.channel import BoundedChannel
from agent_api.classify import ExecClassifier
from agent_api.errors import BackendError
from agent_api.pinned import timeout_message
from agent_api.process import kill_group, pump_lines, spawn, stderr_tail, write_stdin
from agent_api.run import RunCore, RunHandle
from agent_api.values import Completion, handle_facet
from pycodex.jsonrpc.framing import OverlongLine

__all__ = ["ExecLaunch", "start_exec"]


@dataclass(frozen=True)
class ExecLaunch:
    """Everything needed to start the child. ``argv`` may contain ``LAST_MESSAGE_PLACEHOLDER``."""

    argv: Sequence[str]
    cwd: Path
    env: dict[str, str]
    prompt: str
    timeout: float | None
    last_message_flag: str | None = "--output-last-message"


async def start_exec(launch: ExecLaunch, classifier: ExecClassifier) -> RunHandle:
    """Spawn the child and return at once; a spawn failure is reported through the handle."""
    core = RunCore(classifier.agent_kind)
    handle = core.handle()
    scratch = Path(tempfile.mkdtemp(prefix="agent_api_"))
    last_message = scratch / "last_message.txt"
    argv = list(launch.argv)
    if launch.last_message_flag is not None:
        # Exec-level options go before a `resume` subcommand (Codex rejects them after it).
        at = argv.index("resume") if "resume" in argv else len(argv)
        argv[at:at] = [launch.last_message_flag, str(last_message)]
    try:
        proc = await spawn(argv, cwd=launch.cwd, env_overrides=launch.env)
    except (OSError, ValueError) as exc:
        shutil.rmtree(scratch, ignore_errors=True)
        kind = "spawn" if isinstance(exc, OSError) else "invalid_request"
        core.spawn_failed(f"{classifier.agent_kind} backend error: {kind} (details redacted when unsafe)")
        return handle
    supervisor = asyncio.get_running_loop().create_task(
        _supervise(core, proc, classifier, launch, last_message, scratch)
    )
    core.track(supervisor)
    return handle


async def _classify(core: RunCore, lines: BoundedChannel[bytes | OverlongLine], classifier: ExecClassifier) -> None:
    """Classify every line; forward while the caller listens, keep draining after it leaves."""
    for event in classifier.preamble():
        await core.emit(event)
    while (line := await lines.recv()) is not None:
        if isinstance(line, OverlongLine):
            classifier.saw_stream_error = True
            await core.emit(core.error_event(
                f"{classifier.agent_kind} stream parse error (redacted): line too long (line_bytes={line.size})"
            ))
            continue
        for event in classifier.feed(line):
            await core.emit(event)


async def _wait_exit(core: RunCore, proc: asyncio.subprocess.Process, timeout: float | None) -> str | None:
    """Wait for the child; on cancel or timeout kill its process group. Returns why it was killed."""
    waiter = asyncio.ensure_future(proc.wait())
    cancel = asyncio.ensure_future(core.cancelled.wait())
    try:
        done, _ = await asyncio.wait({waiter, cancel}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        cancel.cancel()
    if waiter in done:
        return None
    kill_group(proc)
    await waiter
    return "cancelled" if cancel in done else "timeout"


async def _supervise(
    core: RunCore,
    proc: asyncio.subprocess.Process,
    classifier: ExecClassifier,
    launch: ExecLaunch,
    last_message: Path,
    scratch: Path,
) -> None:
    assert proc.stdout is not None and proc.stderr is not None
    lines: BoundedChannel[bytes | OverlongLine] = BoundedChannel()
    loop = asyncio.get_running_loop()
    tasks = [
        loop.create_task(write_stdin(proc, launch.prompt.encode() + b"\n")),
        loop.create_task(pump_lines(proc.stdout, lines)),
        loop.create_task(_classify(core, lines, classifier)),
    ]
    stderr_task = loop.create_task(stderr_tail(proc.stderr))
    try:
        killed = await _wait_exit(core, proc, launch.timeout)
        # Every line the child wrote is read and classified before the exit is classified.
        await asyncio.gather(*tasks)
        stderr = await stderr_task
        exit_code = proc.returncode if proc.returncode is not None else -1
        if killed is not None:
            message = "cancelled" if killed == "cancelled" else timeout_message(classifier.agent_kind)
            await core.finish(BackendError(message), core.error_event(message))
            return
        outcome = classifier.finish(exit_code, stderr)
        if outcome.error is not None:
            await core.finish(BackendError(outcome.error), outcome.tail)
            return
        final_text = None
        if exit_code == 0:
            final_text = _read_text(last_message) or classifier.final_message
        data = handle_facet(classifier.session_id) if classifier.session_id else None
        completion = bound_completion(Completion(exit_code=exit_code, final_text=final_text, data=data))
        await core.finish(completion, outcome.tail)
    except Exception:
        kill_group(proc)
        for task in [*tasks, stderr_task]:
            task.cancel()
        message = f"{classifier.agent_kind} backend error: other (details redacted when unsafe)"
        await core.finish(BackendError(message), core.error_event(message))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _read_text(path: Path) -> str | None:
    with contextlib.suppress(OSError, UnicodeDecodeError):
        text = path.read_text(encoding="utf-8")
        return text or None
    return None
