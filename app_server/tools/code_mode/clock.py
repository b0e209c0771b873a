"""Code mode's clock: the ``clock`` namespace's ``sleep`` and the nested ``clock__curr_time``.

``sleep`` waits ``duration_ms`` (1 to 43,200,000) and ends early when input is steered into the turn; its
texts are Codex 0.169's (``Wall time: <s, 4 decimals> seconds`` then ``Sleep completed.`` or ``Sleep
interrupted by new input.``). Input already waiting when the sleep starts ends it at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import time
from typing import TYPE_CHECKING

from app_server.tools.call_output import call_output
from app_server.tools.contracts import ToolOutcome
from pycodex.json_types import JsonObj

if TYPE_CHECKING:
    from app_server.threads.sampling import ToolCall
    from app_server.tools.contracts import ToolContext

__all__ = ["MAX_SLEEP_MS", "current_time", "handle_sleep"]

MAX_SLEEP_MS = 43_200_000


def current_time(now: dt.datetime | None = None) -> JsonObj:
    """What ``tools.clock__curr_time({})`` resolves to."""
    moment = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    return {"current_time": moment.strftime("%Y-%m-%d %H:%M:%S UTC")}


async def _input_arrives(ctx: ToolContext, timeout_s: float) -> bool:
    turn = ctx.turn
    if turn.pending_inputs:
        return True
    # Nothing is waiting, so a set event only tells of input the model has already been sent: start afresh.
    turn.input_arrived.clear()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(turn.input_arrived.wait(), timeout_s)
        return True
    return False


async def handle_sleep(ctx: ToolContext, call: ToolCall) -> ToolOutcome:
    """Answer a ``clock.sleep`` call once the time has passed or input has arrived."""
    try:
        args = json.loads(call.arguments or "{}")
    except ValueError as exc:
        return ToolOutcome(call_output(call, f"failed to parse function arguments: {exc}"))
    duration = args.get("duration_ms") if isinstance(args, dict) else None
    if not isinstance(duration, int | float) or isinstance(duration, bool) or not 1 <= duration <= MAX_SLEEP_MS:
        return ToolOutcome(call_output(call, f"duration_ms must be between 1 and {MAX_SLEEP_MS}"))
    started = time.monotonic()
    interrupted = await _input_arrives(ctx, duration / 1000)
    ending = "Sleep interrupted by new input." if interrupted else "Sleep completed."
    return ToolOutcome(call_output(call, f"Wall time: {time.monotonic() - started:.4f} seconds\n{ending}"))
