"""OpenTelemetry for the app-server: the hooks the server calls, each a no-op unless ``[otel]`` is set up.

The server builds its telemetry once (:func:`start`: None when no signal is exported, and then the
OpenTelemetry SDK is never imported) and hands it to each connection. A request's dispatch makes it
active (:func:`request`) in a ``ContextVar``, with the request's span current: every task the handler
starts (a turn, a sub-agent) inherits both, so the hooks in the turn runner, the tool router, the
approval wait, the exec-server client and the MCP client need no plumbing, and a process without
telemetry pays one ``ContextVar.get`` per hook. The span tree of a turn::

    <method> (one per JSON-RPC request; its parent: the request's W3C `trace` field, when it has one)
    └── invoke_agent pycodex (the turn)
        ├── chat <model> (each model request, GenAI semantic conventions)
        └── execute_tool <name> (each tool call)
            ├── approval <method> (waiting for the user)
            ├── exec <method> (an exec-server round trip)
            └── mcp <server>/<tool> (an MCP tools/call)

Standard library only: the connection imports it at start-up.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Iterator, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, TypeVar

from pycodex.json_types import JsonObj, JsonValue
from pycodex.otel.settings import Exporter, OtelSettings, Signal, resolve

if TYPE_CHECKING:
    from pycodex.otel.sdk import Telemetry, TurnSpan

__all__ = [
    "active",
    "approval_wait",
    "exec_request",
    "item_completed",
    "mcp_call",
    "model_stream",
    "request",
    "start",
    "tool_call",
    "turn_ended",
    "turn_started",
]

T = TypeVar("T")

#: The telemetry of the request or turn this task works for (set by :func:`request`, inherited by tasks).
_ACTIVE: ContextVar[Telemetry | None] = ContextVar("pycodex_otel", default=None)


def start(settings: OtelSettings, env: Mapping[str, str], *, version: str) -> Telemetry | None:
    """The server's telemetry, exporting the signals ``settings`` and ``env`` set up; None when none is
    (the SDK is imported only here, and only then). Raises ImportError naming the extra when it is missing."""
    signals: tuple[Signal, ...] = ("traces", "metrics", "logs")
    exporters: dict[Signal, Exporter] = {signal: found for signal in signals
                                         if (found := resolve(settings, signal, env)) is not None}
    if not exporters:
        return None
    try:
        from pycodex.otel import sdk
    except ImportError as exc:
        raise ImportError(f"[otel] needs the OpenTelemetry SDK: pip install 'pycodex-stack[otel]' ({exc})") from None
    return sdk.Telemetry(settings, exporters, env=env, version=version, active=_ACTIVE.get)


def active() -> Telemetry | None:
    """The telemetry of the current request or turn, or None."""
    return _ACTIVE.get()


def request(telemetry: Telemetry | None, method: str, request_id: JsonValue, trace: JsonValue,
            queued: int) -> contextlib.AbstractContextManager[None]:
    """Dispatching one client request: its span (the parent from ``trace``, Codex's W3C trace context),
    made current with ``telemetry`` for the block; ``queued``: requests still waiting behind it."""
    if telemetry is None:
        return contextlib.nullcontext()
    return _activated(telemetry, method, request_id, trace, queued)


@contextlib.contextmanager
def _activated(telemetry: Telemetry, method: str, request_id: JsonValue, trace: JsonValue,
               queued: int) -> Iterator[None]:
    token = _ACTIVE.set(telemetry)
    try:
        with telemetry.request_span(method, request_id, trace, queued):
            yield
    finally:
        _ACTIVE.reset(token)


def turn_started(thread_id: str, turn_id: str, model: str, inputs: list[JsonObj]) -> TurnSpan | None:
    """A turn began in this task: its span, current for the rest of the task (end it with :func:`turn_ended`)."""
    telemetry = _ACTIVE.get()
    return None if telemetry is None else telemetry.turn_started(thread_id, turn_id, model, inputs)


def turn_ended(span: TurnSpan | None, outcome: str, error: JsonObj | None) -> None:
    """The turn of ``span`` ended with ``outcome`` (complete, fail, abort): its span ends, the batch is
    flushed in the background (bounded)."""
    if span is not None:
        span.end(outcome, error)


def model_stream(stream: AsyncIterator[T], *, model: str, provider: str) -> AsyncIterator[T]:
    """``stream`` (one model request's events) inside a ``chat`` span; ``stream`` itself when inactive."""
    telemetry = _ACTIVE.get()
    return stream if telemetry is None else telemetry.model_stream(stream, model=model, provider=provider)


async def tool_call(name: str, call_id: str, call: Awaitable[T]) -> T:
    """Await ``call`` (one tool call) inside its ``execute_tool`` span."""
    telemetry = _ACTIVE.get()
    if telemetry is None:
        return await call
    with telemetry.tool_span(name, call_id):
        return await call


async def approval_wait(method: str, answer: Awaitable[T]) -> T:
    """Await the user's ``answer`` to an approval request (``method``) inside its span."""
    telemetry = _ACTIVE.get()
    if telemetry is None:
        return await answer
    with telemetry.approval_span(method) as span:
        result = await answer
        span.decided(result)
        return result


async def exec_request(method: str, answer: Awaitable[T]) -> T:
    """Await one exec-server request's ``answer`` inside its span."""
    telemetry = _ACTIVE.get()
    if telemetry is None:
        return await answer
    with telemetry.client_span(f"exec {method}", {"rpc.system": "jsonrpc", "rpc.method": method}):
        return await answer


async def mcp_call(server: str, tool: str, answer: Awaitable[T]) -> T:
    """Await one MCP ``tools/call``'s ``answer`` inside its span."""
    telemetry = _ACTIVE.get()
    if telemetry is None:
        return await answer
    attributes = {"mcp.server.name": server, "gen_ai.tool.name": tool, "mcp.method.name": "tools/call"}
    with telemetry.client_span(f"mcp {server}/{tool}", attributes):
        return await answer


def item_completed(item: JsonObj) -> None:
    """A turn item completed: a failed or declined one marks the tool call it belongs to as failed."""
    telemetry = _ACTIVE.get()
    if telemetry is not None and item.get("status") in ("failed", "declined"):
        telemetry.tool_failed(str(item.get("type")), str(item.get("status")))
