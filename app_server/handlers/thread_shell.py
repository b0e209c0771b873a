"""thread/shellCommand: run a user's shell command as its own turn of a loaded thread
(app_server/threads/user_shell.py). Codex answers ``{}`` at once; the turn reports through notifications."""

from __future__ import annotations

from app_server.context import HandlerContext
from app_server.protocol import responses_named as rn
from app_server.protocol.thread_requests import ThreadShellCommandParams
from app_server.store import new_uuid7
from app_server.threads.state import TurnState
from app_server.threads.user_shell import UserShellRunner
from pycodex.jsonrpc.errors import InvalidParams, InvalidRequest

__all__ = ["ThreadShellCommandParams", "shell_command"]


async def shell_command(
    ctx: HandlerContext, params: ThreadShellCommandParams
) -> rn.ThreadShellCommandResponse:
    services = ctx.services
    if not params.command.strip():
        raise InvalidParams("command must not be empty")
    if params.timeout_ms is not None and params.timeout_ms < 0:
        raise InvalidParams("timeoutMs must be non-negative")
    thread = services.threads.get_loaded(params.thread_id)
    if thread.active is not None:
        raise InvalidRequest(f"thread {thread.id} already has an active turn")
    services.threads.subscribe(thread, ctx.session)
    turn = TurnState(new_uuid7(), inputs=[])
    runner = UserShellRunner(command=params.command, timeout_ms=params.timeout_ms, thread=thread, turn=turn,
                             services=await services.turn_services(thread, ctx.session))
    ctx.session.after_response(thread.start_turn(turn, runner, services.spawn))
    return rn.ThreadShellCommandResponse()
