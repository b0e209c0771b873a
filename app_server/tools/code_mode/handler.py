"""The ``exec`` and ``wait`` tools of code mode: start a script, hand its output back, continue it.

``exec`` (freeform) takes the script, optionally after a ``// @exec: {...}`` pragma line, starts a cell
(``cells``) and waits ``yield_time_ms`` (default 30000) for it; a script still running then is reported
with its cell ID, and ``wait`` (default 10000 ms) continues it or, with ``terminate``, stops it. Each
nested ``tools.<name>(...)`` call becomes a ``ToolCall`` for the turn's router (``route``), so it is
approved, sandboxed and shown to the client exactly as the direct call would be.

An interrupted turn kills the cell it was waiting on. A cell that yielded lives on (until ``wait`` ends it,
the thread unloads or ``cells.CELL_MAX_S`` passes), but its nested calls run only while a turn that called
exec or wait on it is running: each such call attaches its own turn. Error texts are Codex 0.169's
except where a comment says otherwise.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from app_server.store import new_uuid7
from app_server.threads.sampling import ToolCall
from app_server.tools.call_output import call_output
from app_server.tools.code_mode.ask_async import handle_ask_async
from app_server.tools.code_mode.cells import Cell, CodeCells, CodeModeUnavailable, NestedCall, NestedToolError
from app_server.tools.code_mode.clock import current_time, handle_sleep
from app_server.tools.code_mode.results import cell_result, failed_result, nested_result
from app_server.tools.code_mode.specs import ASK_ASYNC, CURR_TIME, CodeModeTools, nested_description
from app_server.tools.contracts import ToolOutcome
from pycodex.json_types import JsonObj, JsonValue

if TYPE_CHECKING:
    from app_server.tools.contracts import ToolContext

__all__ = ["DEFAULT_EXEC_YIELD_MS", "DEFAULT_WAIT_YIELD_MS", "handle_code_mode_call", "is_code_mode_call",
           "parse_pragma"]

DEFAULT_EXEC_YIELD_MS = 30_000
DEFAULT_WAIT_YIELD_MS = 10_000
DEFAULT_MAX_TOKENS = 10_000
#: No single exec or wait call waits longer than this, whatever the model asks.
MAX_YIELD_MS = 600_000

_PRAGMA = re.compile(r"\A[ \t]*// @exec:([^\r\n]*)\r?\n")
_PRAGMA_KEYS = ("yield_time_ms", "max_output_tokens")

Route = Callable[["ToolContext", ToolCall], Awaitable[ToolOutcome]]


class PragmaError(ValueError):
    """The pragma line is not one exec accepts (the message is Codex's)."""


def parse_pragma(text: str) -> tuple[dict[str, int], str]:
    """The pragma's settings and the source after it (no pragma: no settings, the whole text)."""
    match = _PRAGMA.match(text)
    if match is None:
        return {}, text
    try:
        value = json.loads(match[1])
    except ValueError as exc:
        raise PragmaError("exec pragma must be valid JSON with supported fields `yield_time_ms` and "
                          f"`max_output_tokens`: {exc}") from None
    if not isinstance(value, dict):
        raise PragmaError("exec pragma must be valid JSON with supported fields `yield_time_ms` and "
                          "`max_output_tokens`: expected an object")
    unknown = [k for k in value if k not in _PRAGMA_KEYS]
    if unknown:
        raise PragmaError(f"exec pragma only supports `yield_time_ms` and `max_output_tokens`; got `{unknown[0]}`")
    settings: dict[str, int] = {}
    for key, setting in value.items():
        if not isinstance(setting, int) or isinstance(setting, bool) or setting < 0:
            raise PragmaError(f"exec pragma field `{key}` must be a non-negative integer")
        settings[key] = setting
    return settings, text[match.end():]


def _bridge(ctx: ToolContext, route: Route, nested: list[JsonObj], cancelled: list[bool]) -> NestedCall:
    by_name = {str(spec["name"]): spec for spec in nested}

    async def call(name: str, value: JsonValue) -> JsonValue:
        spec = by_name.get(name)
        if spec is None:
            raise NestedToolError(f"tool `{name}` is not available in exec")
        if name == CURR_TIME["name"]:  # answered here: no tool module owns it
            return current_time()
        if ctx.turn.ended:  # its approvals and items would belong to a finished turn
            raise NestedToolError(f"tool `{name}` cannot run: the turn that started this call has ended; "
                                  "use wait in the current turn to continue the script")
        call_id = f"exec-{uuid.uuid4()}"  # Codex's id of a nested call (and so of its item)
        if spec["type"] == "custom":
            if not isinstance(value, str):
                raise NestedToolError(f"tool `{name}` expects a string input")  # pycodex's text
            tool_call = ToolCall(call_id, name, value, custom=True)
        else:
            if not isinstance(value, dict):
                raise NestedToolError(f"tool `{name}` expects a JSON object for arguments")
            tool_call = ToolCall(call_id, name, json.dumps(value))
        outcome = await route(ctx, tool_call)
        if outcome.end_turn:  # the user cancelled from an approval prompt: the turn ends once exec answers
            cancelled.append(True)
        return nested_result(name, outcome.output)

    return call


def _outcome(call: ToolCall, output: JsonValue, notices: list[str], *, end_turn: bool = False) -> ToolOutcome:
    item = call_output(call, "")
    item["output"] = output
    extra = tuple({"type": "custom_tool_call_output", "id": f"ctco_{new_uuid7()}", "call_id": call.call_id,
                   "name": "exec", "output": text} for text in notices)
    return ToolOutcome(item, end_turn=end_turn, extra=extra)


async def _report(cells: CodeCells, cell: Cell, call: ToolCall, yield_ms: int, max_tokens: int,
                  cancelled: list[bool], started: float) -> ToolOutcome:
    """Wait for ``cell`` as the call asks and answer the call; ``started``: when the call began (monotonic)."""
    try:
        out = await cell.next_output(min(yield_ms, MAX_YIELD_MS) / 1000)
    except asyncio.CancelledError:  # the turn was interrupted: nothing will wait for this cell any more
        await cell.terminate()
        cells.forget(cell)
        raise
    if out.status != "running":
        cells.forget(cell)
    result = cell_result(out, cell.id, time.monotonic() - started, max_tokens)
    return _outcome(call, result, out.notices, end_turn=bool(cancelled))


async def handle_exec(ctx: ToolContext, call: ToolCall, route: Route, nested: list[JsonObj]) -> ToolOutcome:
    """Run the script of an ``exec`` call until it ends or yields."""
    try:
        settings, source = parse_pragma(call.arguments)
    except PragmaError as exc:
        return ToolOutcome(call_output(call, str(exc)))
    started = time.monotonic()  # the wall time includes starting the runtime, as Codex's does
    cells = ctx.thread.services.code_cells
    cancelled: list[bool] = []
    tools = [{"name": spec["name"], "description": nested_description(spec)} for spec in nested]
    try:
        cell = await cells.start(source, tools, _bridge(ctx, route, nested, cancelled))
    except CodeModeUnavailable as exc:
        return _outcome(call, failed_result(str(exc)), [])
    return await _report(cells, cell, call, settings.get("yield_time_ms", DEFAULT_EXEC_YIELD_MS),
                         settings.get("max_output_tokens", DEFAULT_MAX_TOKENS), cancelled, started)


async def handle_wait(ctx: ToolContext, call: ToolCall, route: Route, nested: list[JsonObj]) -> ToolOutcome:
    """Continue (or terminate) a running cell and report what it did since."""
    try:
        args = json.loads(call.arguments or "{}")
    except ValueError as exc:
        return ToolOutcome(call_output(call, f"failed to parse function arguments: {exc}"))
    if not isinstance(args, dict) or not isinstance(args.get("cell_id"), str | int):
        return ToolOutcome(call_output(call, "failed to parse function arguments: missing field `cell_id`"))
    started = time.monotonic()
    cells = ctx.thread.services.code_cells
    cell = cells.get(str(args["cell_id"]))
    if cell is None:
        return _outcome(call, failed_result(f"exec cell {args['cell_id']} not found"), [])
    cancelled: list[bool] = []
    cell.bridge = _bridge(ctx, route, nested, cancelled)
    if args.get("terminate") is True:
        await cell.terminate()
        return await _report(cells, cell, call, 0, DEFAULT_MAX_TOKENS, cancelled, started)
    yield_ms, max_tokens = args.get("yield_time_ms"), args.get("max_tokens")
    return await _report(
        cells, cell, call, int(yield_ms) if isinstance(yield_ms, int | float) else DEFAULT_WAIT_YIELD_MS,
        int(max_tokens) if isinstance(max_tokens, int | float) else DEFAULT_MAX_TOKENS, cancelled, started)


def is_code_mode_call(call: ToolCall, tools: CodeModeTools) -> bool:
    """Whether ``call`` (its ``functions`` namespace already dropped) is one ``handle_code_mode_call`` answers."""
    if call.custom:
        return call.name == "exec" and not call.namespace and tools.offers("functions", "exec")
    if call.namespace == "clock":
        return call.name == "sleep" and tools.offers("clock", "sleep")
    return not call.namespace and call.name in ("wait", ASK_ASYNC["name"]) and tools.offers("functions", call.name)


async def handle_code_mode_call(ctx: ToolContext, call: ToolCall, route: Route, tools: CodeModeTools) -> ToolOutcome:
    """Answer ``exec``, ``wait``, ``request_user_input_async`` or ``clock.sleep``; nested calls go to ``route``."""
    nested = list(tools.nested)
    if call.name == "exec":
        return await handle_exec(ctx, call, route, nested)
    if call.name == "sleep":
        return await handle_sleep(ctx, call)
    if call.name == ASK_ASYNC["name"]:
        return await handle_ask_async(ctx, call)
    return await handle_wait(ctx, call, route, nested)
