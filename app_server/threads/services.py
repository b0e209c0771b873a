"""What threads and turns use from outside themselves, as frozen, typed bundles built in one place each.

``ThreadServices`` is built once per loaded thread (``AppServer.thread_services``): where its tools run,
its skills and its exec sessions. ``TurnServices`` is built once per turn (``AppServer.turn_services``):
the model gateway, the tool router and its specs, and who asked for the turn. The runner receives these
and nothing else, so a new dependency shows up here, typed, rather than as another closure.

Tools see the running turn only through ``ToolContext`` and answer with a ``ToolOutcome``; the runner
records the outcome (history, the unanswered-call table, the end of the turn).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from pycodex.json_types import JsonObj

if TYPE_CHECKING:
    from app_server.environments import ThreadEnvironment
    from app_server.mcp.service import ThreadMcp
    from app_server.model.errors import RetryNotice
    from app_server.model.events import ResponseEvent
    from app_server.model.provider import RequestContext
    from app_server.store.thread_state import ThreadStateDb
    from app_server.threads.sampling import ToolCall
    from app_server.threads.skills_glue import ThreadSkills
    from app_server.threads.state import Subscriber, ThreadRuntime, TurnState
    from app_server.tools.unified_exec import UnifiedExec

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
    ) -> AsyncIterator[ResponseEvent]: ...


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What one tool call produced: the output item the runner records for the model."""

    output: JsonObj
    #: The user cancelled from an approval prompt: after recording ``output`` the turn ends as interrupted.
    end_turn: bool = False


class ToolContext(Protocol):
    """The slice of a running turn a tool may use."""

    @property
    def thread(self) -> ThreadRuntime: ...

    @property
    def turn(self) -> TurnState: ...

    @property
    def origin(self) -> Subscriber | None:
        """The connection that started the turn (asked first for approvals)."""

    async def complete_item(self, item: JsonObj) -> None:
        """Store ``item`` durably, then announce ``item/completed``."""


class ToolRouter(Protocol):
    async def __call__(self, ctx: ToolContext, call: ToolCall) -> ToolOutcome: ...


@dataclass(frozen=True, slots=True)
class ClientIdentity:
    """How the turn's model requests introduce themselves (from the connection that started the turn)."""

    originator: str
    user_agent: str


@dataclass(frozen=True, slots=True)
class ThreadServices:
    environment: ThreadEnvironment
    skills: ThreadSkills
    exec_sessions: UnifiedExec
    #: The thread's MCP servers (started with the thread, stopped when it unloads).
    mcp: ThreadMcp | None = None
    #: Read states, goals and sections (thread_state.sqlite); None where nothing persists them (unit tests).
    read_states: ThreadStateDb | None = None


@dataclass(frozen=True, slots=True)
class TurnServices:
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
