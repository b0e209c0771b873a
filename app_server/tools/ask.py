"""Ask the turn's clients a question and wait for the first answer: the one sequence every asking tool uses.

Command and patch approvals, MCP elicitations and ``request_user_input`` all go the same way, the order
Codex 0.169 keeps: the request is registered on the turn (so the turn's end resolves it), the thread's
status is announced (waiting on the user), the question is offered to the client that started the turn
and then to the thread's other live clients, and the first answer wins. On an interrupt the request stays
open and the runner resolves it after ``turn/completed``; otherwise it is withdrawn from every client
(``serverRequest/resolved``) before the answer is returned. What each tool announces once it has the
answer differs per tool (Codex re-announces the status after some and not others), so callers do that.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from app_server.tools.approvals import APPROVAL_TIMEOUT_S
from app_server.tools.pending import PendingRequest, askable_clients
from pycodex import otel

if TYPE_CHECKING:
    from app_server.tools.contracts import ToolContext
    from pycodex.json_types import JsonObj, JsonValue

__all__ = ["NoAnswer", "ask_clients"]

T = TypeVar("T")


class NoAnswer(Exception):
    """The question got no usable answer: no client could be asked (``nobody``), or it timed out, was answered
    with an error, or its answer could not be read (``cause``)."""

    def __init__(self, *, nobody: bool, cause: Exception | None = None) -> None:
        super().__init__("no client to ask" if nobody else f"no answer: {cause}")
        self.nobody = nobody
        self.cause = cause


async def ask_clients(
    ctx: ToolContext,
    method: str,
    params: JsonObj,
    parse: Callable[[JsonValue], T],
    *,
    timeout: float = APPROVAL_TIMEOUT_S,
    before_offer: Callable[[], Awaitable[None]] | None = None,
) -> T:
    """Send ``method`` to the turn's clients and return ``parse`` of the first answer; raises NoAnswer.

    ``before_offer`` runs after the status is announced and before the question is sent (a command's
    ``item/started`` goes there, as in Codex).
    """
    thread, turn = ctx.thread, ctx.turn
    askable = askable_clients(ctx.origin, thread.subscribers)
    if not askable:
        raise NoAnswer(nobody=True)
    pending = PendingRequest(method, params, timeout=timeout)
    key = id(pending)
    turn.open_requests[key] = pending
    await thread.emit_status()
    if before_offer is not None:
        await before_offer()
    for session in askable:
        pending.offer(session)
    try:
        answer = parse(await otel.approval_wait(method, pending.wait()))
    except asyncio.CancelledError:
        raise  # interrupted: the request stays open; the runner resolves it after turn/completed
    except Exception as exc:  # a timeout, an error answer, or an unreadable one: no decision (fail closed)
        await _withdraw(ctx, key, pending)
        raise NoAnswer(nobody=False, cause=exc) from exc
    await _withdraw(ctx, key, pending)
    return answer


async def _withdraw(ctx: ToolContext, key: int, pending: PendingRequest) -> None:
    ctx.turn.open_requests.pop(key, None)
    await pending.close(ctx.thread.id)
