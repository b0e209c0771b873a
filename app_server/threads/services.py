"""What threads and turns use from outside themselves, as frozen, typed bundles built in one place each.

``ThreadServices`` is built once per loaded thread (``AppServer.thread_services``): where its tools run,
its skills and its exec sessions. ``TurnServices`` is built once per turn (``AppServer.turn_services``):
the model gateway, the tool router and its specs, and who asked for the turn. The runner receives these
and nothing else, so a new dependency shows up here, typed, rather than as another closure.

Tools see the running turn only through ``ToolContext`` and answer with a ``ToolOutcome``; the runner
records the outcome (history, the unanswered-call table, the end of the turn). Those tool contracts live in
``tools.contracts`` and ``ThreadServices`` in ``threads.contracts`` (leaf modules, so the thread state, the
tools and this module need no import circle); they are re-exported here for the callers that build them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from app_server.threads.contracts import ThreadServices
from app_server.tools.contracts import ToolContext, ToolOutcome, ToolRouter
from pycodex.json_types import JsonObj

if TYPE_CHECKING:
    from app_server.model.errors import RetryNotice
    from app_server.model.events import ResponseEvent
    from app_server.model.provider import RequestContext
    from app_server.threads.contracts import Subscriber

__all__ = [
    "ClientIdentity",
    "ModelGateway",
    "ThreadServices",
    "ToolContext",
    "ToolOutcome",
    "ToolRouter",
    "TurnServices",
]


class ModelGateway(Protocol):
    """Streams one Responses request through the client of ``provider_id``."""

    def stream(
        self, provider_id: str, body: JsonObj, ctx: RequestContext,
        on_retry: Callable[[RetryNotice], Awaitable[None]],
    ) -> AsyncIterator[ResponseEvent]:
        """The request's response events, in order; ``on_retry`` hears of each retry before it happens."""
        ...


@dataclass(frozen=True, slots=True)
class ClientIdentity:
    """How the turn's model requests introduce themselves (from the connection that started the turn)."""

    originator: str
    user_agent: str


@dataclass(frozen=True, slots=True)
class TurnServices:
    """What one turn uses from outside, built once per turn (``AppServer.turn_services``)."""

    model: ModelGateway
    run_tool: ToolRouter
    tool_specs: tuple[JsonObj, ...]
    client: ClientIdentity
    project_root_markers: tuple[str, ...]
    origin: Subscriber | None
    #: Tools whose source may still be starting (MCP servers): awaited once, when the turn starts running.
    late_tool_specs: Callable[[], Awaitable[tuple[JsonObj, ...]]] | None = None
    #: Told about each completed turn the user sent input to (config `notify`, app_server/notify.py).
    on_turn_completed: Callable[[JsonObj], Awaitable[None]] | None = None
    #: Code mode (``tools.code_mode``): the ``additional_tools`` item that opens the history; the request
    #: then has no ``tools``.
    additional_tools: JsonObj | None = None
