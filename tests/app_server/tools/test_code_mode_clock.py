"""code_mode.clock: sleep ends early when input is steered into the turn (Codex 0.169's texts)."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import re
from dataclasses import dataclass, field
from typing import Any

from app_server.threads.sampling import ToolCall
from app_server.tools.code_mode.clock import current_time, handle_sleep
from pycodex.json_types import JsonObj


@dataclass
class _Turn:
    pending_inputs: list[list[JsonObj]] = field(default_factory=list)
    input_arrived: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class _Ctx:
    turn: _Turn


def _sleep(ms: int) -> ToolCall:
    return ToolCall("call_s", "sleep", json.dumps({"duration_ms": ms}), namespace="clock")


async def test_steered_input_interrupts_a_sleep() -> None:
    ctx: Any = _Ctx(_Turn())
    ctx.turn.input_arrived.set()  # input of earlier in the turn, already sent to the model: not new
    task = asyncio.create_task(handle_sleep(ctx, _sleep(60_000)))
    for _ in range(5):  # let the sleep start waiting (yields, not time)
        await asyncio.sleep(0)
    assert not task.done()
    ctx.turn.pending_inputs.append([{"type": "text", "text": "hey"}])
    ctx.turn.input_arrived.set()
    outcome = await asyncio.wait_for(task, 10)
    assert re.fullmatch(r"Wall time: \d+\.\d{4} seconds\nSleep interrupted by new input\.", outcome.output["output"])


async def test_input_already_waiting_ends_the_sleep_at_once() -> None:
    ctx: Any = _Ctx(_Turn(pending_inputs=[[{"type": "text", "text": "hey"}]]))
    outcome = await asyncio.wait_for(handle_sleep(ctx, _sleep(60_000)), 10)
    assert outcome.output["output"].endswith("\nSleep interrupted by new input.")


async def test_bad_durations_are_refused() -> None:
    ctx: Any = _Ctx(_Turn())
    for args in ({"duration_ms": 0}, {"duration_ms": 43_200_001}, {}, {"duration_ms": True}):
        outcome = await handle_sleep(ctx, ToolCall("c", "sleep", json.dumps(args), namespace="clock"))
        assert outcome.output["output"] == "duration_ms must be between 1 and 43200000"


def test_the_time_is_utc_in_codex_s_format() -> None:
    moment = dt.datetime(2026, 12, 2, 17, 59, 51, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert current_time(moment) == {"current_time": "2026-12-02 15:59:51 UTC"}
