"""``exec_command`` and ``write_stdin``: from a model function call to a process and back.

One path for every environment: the thread's ``Spawner`` (in-process local, or an exec-server) runs the
command; approvals and the sandbox are decided here; the ``commandExecution`` item streams the output
and its result becomes the ``function_call_output`` text.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from app_server.protocol import notices
from app_server.threads import items as it
from app_server.tools import approvals, execpolicy, patch_tool
from app_server.tools.apply_patch import extract_heredoc_patch
from app_server.tools.approvals import NO_ENVIRONMENT
from app_server.tools.ask import NoAnswer, ask_clients
from app_server.tools.call_output import call_output
from app_server.tools.contracts import ToolOutcome
from app_server.tools.output import format_exec_output
from app_server.tools.processes import SpawnError
from app_server.tools.unified_exec import (
    DEFAULT_EXEC_YIELD_MS,
    DEFAULT_POLL_YIELD_MS,
    DEFAULT_WRITE_YIELD_MS,
    MAX_SESSIONS,
    CollectResult,
    ExecSession,
    UnifiedExec,
    UnknownSession,
    clamp_yield_ms,
)
from pycodex.json_types import JsonObj

if TYPE_CHECKING:
    from app_server.threads.sampling import ToolCall
    from app_server.tools.contracts import ToolContext, ToolThread

__all__ = ["NO_ENVIRONMENT", "handle_tool_call"]

logger = logging.getLogger(__name__)





async def handle_tool_call(ctx: ToolContext, call: ToolCall) -> ToolOutcome:
    """Run one model tool call; the outcome is the output item the runner records."""
    result = await _run(ctx, call)
    return result if isinstance(result, ToolOutcome) else ToolOutcome(call_output(call, result))


async def _run(ctx: ToolContext, call: ToolCall) -> str | ToolOutcome:
    if call.namespace == "skills":
        return await ctx.thread.services.skills.call_tool(call.name, call.arguments)
    if call.custom or call.namespace:
        return f"unsupported call: {call.name}"
    try:
        args = json.loads(call.arguments or "{}")
        if not isinstance(args, dict):
            raise ValueError("arguments must be a JSON object")
    except ValueError as exc:
        return f"failed to parse function arguments: {exc}"
    if call.name == "exec_command":
        return await _exec_command(ctx, call, args)
    if call.name == "write_stdin":
        return await _write_stdin(ctx, call, args)
    return f"unsupported call: {call.name}"


def _sessions(ctx: ToolContext) -> UnifiedExec:
    return ctx.thread.services.exec_sessions


def _int_arg(args: JsonObj, key: str) -> int | None:
    value = args.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


async def _exec_command(ctx: ToolContext, call: ToolCall, args: JsonObj) -> str | ToolOutcome:
    thread, turn = ctx.thread, ctx.turn
    cmd = args.get("cmd")
    if not isinstance(cmd, str) or not cmd.strip():
        return "failed to parse function arguments: missing field `cmd`"
    environment = thread.services.environment
    spawner = await environment.spawner()  # a remote environment that failed earlier may be back
    if spawner is None:
        return NO_ENVIRONMENT
    settings = thread.settings
    workdir = args.get("workdir")
    cwd = Path(settings.cwd)
    if isinstance(workdir, str) and workdir:
        cwd = cwd / workdir
    intercepted = await _intercept_patch(ctx, call, cmd, cwd)
    if intercepted is not None:
        return intercepted
    shell = args.get("shell") if isinstance(args.get("shell"), str) else "/bin/bash"
    login = args.get("login") is not False
    argv = [str(shell), "-lc" if login else "-c", cmd]
    escalated = args.get("sandbox_permissions") == "require_escalated"
    started_ms = it.now_ms()
    item = it.command_execution(
        call.call_id, argv=argv, user_cmd=cmd, cwd=str(cwd), process_id=None, source="agent",
        started_at_ms=started_ms,
    )
    announced = False
    if approvals.needs_approval(policy=settings.approval_policy, escalated=escalated, cmd=cmd,
                                approved=thread.approved_commands, argv=argv,
                                allowed_prefixes=thread.approved_prefixes) and not await _allowed_by_rules(thread, argv):
        decision = await _ask(ctx, item, argv, cmd, args)
        announced = True
        if not decision.runs:
            declined = dict(item, status="declined", completedAtMs=it.now_ms())
            await ctx.complete_item(declined)
            if decision.kind == "cancel":
                return ToolOutcome(call_output(call, f"Wall time: 0.1 seconds\n{approvals.CANCELLED_OUTPUT}"),
                                   end_turn=True)
            await thread.emit_status()
            return approvals.DECLINED_OUTPUT
        if decision.kind == "acceptForSession":
            thread.approved_commands.add(cmd)
        if decision.remember_prefix:
            thread.approved_prefixes.append(decision.remember_prefix)
            if thread.codex_home is not None:
                await asyncio.to_thread(execpolicy.append_allowed_prefix, thread.codex_home, decision.remember_prefix)
        escalated = True
    sessions = _sessions(ctx)
    if sessions.count >= MAX_SESSIONS:
        return f"exec_command failed: too many running sessions (limit {MAX_SESSIONS})"
    sandbox = None if escalated else environment.sandbox(settings.sandbox_mode, cwd, settings.writable_roots)
    t0 = time.monotonic()
    run_argv = await environment.command_argv(argv, shell=str(shell), cmd=cmd, login=login)
    try:
        process = await spawner.spawn(
            run_argv if sandbox is None else sandbox.wrap(run_argv), cwd=str(cwd), env=None,
            tty=bool(args.get("tty")),
        )
    except SpawnError as exc:
        failed = dict(item, status="failed", completedAtMs=it.now_ms(), aggregatedOutput=str(exc))
        if not announced:
            await thread.emit(notices.item_started(item, thread.id, turn.id))
        await ctx.complete_item(failed)
        return f"exec_command failed: {exc}"
    item.update(processId=process.pid, source="unifiedExecStartup")
    if not announced:
        await thread.emit(notices.item_started(item, thread.id, turn.id))

    async def on_output(text: str) -> None:
        await thread.emit(notices.command_output_delta(thread.id, turn.id, call.call_id, text))

    session = sessions.open(process, on_output)
    session.label = (str(item["id"]), str(item["command"]), str(item["cwd"]))
    yield_ms = clamp_yield_ms(args.get("yield_time_ms"), DEFAULT_EXEC_YIELD_MS)
    try:
        result = await sessions.collect(session, yield_ms, t0)
    except asyncio.CancelledError:  # interrupted: the process runs on, and its item completes when it exits
        sessions.watch(session, _complete_on_exit(ctx, session, item, t0),
                       name=f"exec-item-{call.call_id}")
        raise
    if result.exit_code is not None or result.lost is not None:
        await _complete_command(ctx, item, result.exit_code, session, t0)
    else:
        # Codex keeps the item open while the process runs (its output still streams to it) and
        # completes it when the process exits, whichever turn is running by then.
        sessions.watch(session, _complete_on_exit(ctx, session, item, t0),
                       name=f"exec-item-{call.call_id}")
    return await _lost_ends_turn(ctx, call, result, _result_text("exec_command", result, args))


async def _lost_ends_turn(ctx: ToolContext, call: ToolCall, result: CollectResult, text: str) -> str | ToolOutcome:
    """``text``; or, when the process went with its environment's box, the outcome that fails the turn.

    Only a provided environment says so (``ThreadEnvironment.lost_error``): a local or plain exec-server
    loss is told to the model and the turn goes on.
    """
    if result.lost is None:
        return text
    error = await ctx.thread.services.environment.lost_error()
    return text if error is None else ToolOutcome(call_output(call, text), turn_error=error)


def _result_text(tool: str, result: CollectResult, args: JsonObj) -> str:
    text = format_exec_output(output=result.output, wall_time_s=result.wall_time_s, exit_code=result.exit_code,
                              session_id=result.session_id, max_output_tokens=_int_arg(args, "max_output_tokens"))
    # A lost process has neither an exit code nor a session to continue: say so before the output.
    return text if result.lost is None else f"{tool} failed: {result.lost}\n{text}"


async def _intercept_patch(ctx: ToolContext, call: ToolCall, cmd: str, cwd: Path) -> str | ToolOutcome | None:
    """Run an ``apply_patch`` heredoc as a patch (a fileChange item), as Codex intercepts it; None otherwise."""
    found = extract_heredoc_patch(cmd)
    if found is None:
        return None
    patch_text, heredoc_dir = found
    result = await patch_tool.run_patch(ctx, call.call_id, patch_text, cwd / heredoc_dir if heredoc_dir else cwd)
    # Codex wraps a successful intercepted patch's output in exec_command's own header (no chunk id).
    text = f"Wall time: 0.0000 seconds\nOutput:\n{result.text}" if result.applied else result.text
    return ToolOutcome(call_output(call, text), end_turn=True) if result.end_turn else text


async def _complete_command(
    ctx: ToolContext, item: JsonObj, exit_code: int | None, session: ExecSession, t0: float
) -> None:
    """Complete the command's item; ``exit_code`` None: the process was lost (no code to report)."""
    # Like Codex: the process's first and last 512 KiB, with the omitted byte count between them.
    transcript = session.transcript.snapshot()
    await ctx.complete_item(dict(
        item, status="completed" if exit_code == 0 else "failed", aggregatedOutput=transcript.text or None,
        exitCode=exit_code, durationMs=int((time.monotonic() - t0) * 1000), completedAtMs=it.now_ms(),
    ))


async def _complete_on_exit(ctx: ToolContext, session: ExecSession, item: JsonObj, t0: float) -> None:
    await session.wait_finished()
    exit_code = session.exit_code if session.exit_code is not None or session.lost else -1
    try:
        await _complete_command(ctx, item, exit_code, session, t0)
    except Exception:  # the thread may be closing; the process result still reached write_stdin
        logger.exception("could not complete command item %s", item["id"])
        return
    turn = ctx.turn
    if turn.ended:  # the turn's stored snapshot was taken at its end: add the late item to it
        for snapshot in ctx.thread.turns:
            items = snapshot.get("items", [])
            if snapshot.get("id") == turn.id and all(i.get("id") != item["id"] for i in items):
                snapshot["items"] = [*items, turn.items[-1]]


async def _allowed_by_rules(thread: ToolThread, argv: list[str]) -> bool:
    """Whether a persisted allow rule (an earlier execpolicy amendment) covers ``argv``."""
    if thread.codex_home is None:
        return False
    prefixes = await asyncio.to_thread(execpolicy.allowed_prefixes, thread.codex_home)
    return execpolicy.matches_prefix(argv, prefixes)


async def _write_stdin(ctx: ToolContext, call: ToolCall, args: JsonObj) -> str | ToolOutcome:
    session_id = _int_arg(args, "session_id")
    if session_id is None:
        return "failed to parse function arguments: missing field `session_id`"
    sessions = _sessions(ctx)
    try:
        session = sessions.get(session_id)
    except UnknownSession as exc:
        return f"write_stdin failed: {exc}"
    chars = args.get("chars") if isinstance(args.get("chars"), str) else ""
    t0 = time.monotonic()
    try:
        await sessions.write(session, chars or "")
    except (BrokenPipeError, ConnectionError, OSError) as exc:
        return f"write_stdin failed: {exc}"
    default = DEFAULT_WRITE_YIELD_MS if chars else DEFAULT_POLL_YIELD_MS
    result = await sessions.collect(session, clamp_yield_ms(args.get("yield_time_ms"), default), t0)
    return await _lost_ends_turn(ctx, call, result, _result_text("write_stdin", result, args))


async def _ask(ctx: ToolContext, item: JsonObj, argv: list[str], cmd: str, args: JsonObj) -> approvals.Decision:
    """Send the approval request and wait for the user's decision."""
    thread, turn = ctx.thread, ctx.turn
    params = approvals.approval_params(
        thread_id=thread.id, turn_id=turn.id, item_id=item["id"], started_at_ms=item["startedAtMs"],
        environment_id=thread.services.environment.id, reason=args.get("justification") if isinstance(
            args.get("justification"), str) else None,
        command=item["command"], argv=argv, cwd=item["cwd"], user_cmd=cmd,
        prefix_rule=args.get("prefix_rule") if isinstance(args.get("prefix_rule"), list) else None,
    )

    async def started() -> None:
        await thread.emit(notices.item_started(item, thread.id, turn.id))

    try:
        decision = await ask_clients(ctx, "item/commandExecution/requestApproval", params, approvals.parse_decision,
                                     before_offer=started)
    except NoAnswer as exc:
        if not exc.nobody:
            logger.info("approval request for %s ended without a decision: %s", item["id"], exc.cause)
        return approvals.Decision("decline")
    if decision.runs:
        await thread.emit_status()
    return decision
