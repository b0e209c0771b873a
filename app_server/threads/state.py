"""Runtime state of a loaded thread and of its active turn.

``ThreadRuntime`` owns what lives only while a thread is loaded: its sticky settings, model history,
turns, token usage, subscribers, rollout writer and services. ``TurnState`` is one turn; its status
moves only through the table in ``threads.lifecycle`` (``TurnState.apply``), which refuses any event
once the turn has ended, so "exactly one ``turn/completed`` per turn" is enforced in one place.
Handlers control turns through ``ThreadRuntime.start_turn``, ``steer`` and ``interrupt``; the runner
ends them with ``end_turn``. Connections are seen through the ``Subscriber`` protocol only. ``Subscriber``,
``ThreadSettings`` and ``ThreadServices`` live in ``threads.contracts`` and are re-exported here.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from app_server.protocol import notices
from app_server.protocol.notices import Notice
from app_server.store.git_info import read_git_info
from app_server.threads.contracts import Subscriber, ThreadServices, ThreadSettings
from app_server.threads.lifecycle import TurnEvent, TurnStatus, advance
from pycodex.json_types import JsonObj

if TYPE_CHECKING:
    from app_server.store import RolloutWriter
    from app_server.tools.pending import PendingRequest
    from app_server.tools.turn_diff import TurnDiffTracker

__all__ = [
    "Spawn", "Subscriber", "ThreadRuntime", "ThreadServices", "ThreadSettings", "TurnDriver", "TurnState",
    "empty_usage",
]

logger = logging.getLogger(__name__)

MODEL_CONTEXT_WINDOW = 258_400
#: How long a thread with several subscribers waits for one that does not read.
SLOW_SUBSCRIBER_S = 1.0


def empty_usage() -> JsonObj:
    """A token-usage breakdown with every count at zero."""
    return {
        "totalTokens": 0,
        "inputTokens": 0,
        "cachedInputTokens": 0,
        "cacheWriteInputTokens": 0,
        "outputTokens": 0,
        "reasoningOutputTokens": 0,
    }


class TurnDriver(Protocol):
    """What runs a turn (``TurnRunner``): the thread launches it and forwards new input to it."""

    async def run(self) -> None:
        """Run the turn to its end."""

    def steer(self) -> None:
        """New input was added to the turn: take it into account."""


_T = TypeVar("_T")


class Spawn(Protocol):
    """Starts a background task owned by the server (``AppServer.spawn``)."""

    def __call__(self, coro: Coroutine[object, object, _T], *, name: str) -> asyncio.Task[_T]:
        """Start ``coro`` as a task named ``name``; the server cancels it at shutdown."""
        ...

_END_EVENTS = frozenset({TurnEvent.COMPLETE, TurnEvent.ABORT, TurnEvent.FAIL})


#: Item types whose content streams in deltas: a running turn shows them only once completed (as Codex).
_STREAMED_TYPES = frozenset({"agentMessage", "reasoning", "plan"})


class TurnState:
    """One turn; its status moves only through ``lifecycle.advance`` (see ``apply``)."""

    def __init__(self, turn_id: str, *, inputs: list[JsonObj]) -> None:
        self.id = turn_id
        self.status = TurnStatus.ACCEPTED
        self.inputs = inputs
        self.started_at = int(time.time())
        self._t0 = time.monotonic()
        self.items: list[JsonObj] = []
        #: Items announced with ``item/started`` and not completed yet, by id: a client that joins mid-turn
        #: (thread/resume) sees them in the running turn, as Codex's active-turn snapshot shows them.
        self.started_items: dict[str, JsonObj] = {}
        self.last_agent_message: JsonObj | None = None
        self.error: JsonObj | None = None
        self.completed_at: int | None = None
        self.duration_ms: int | None = None
        self.task: asyncio.Task[None] | None = None
        #: Input that arrived while the turn ran (turn/steer, or turn/start merged into this turn).
        self.pending_inputs: list[list[JsonObj]] = []
        #: The client's id for each pending input's user message (its item's ``clientId``), index for index.
        self.pending_client_ids: list[str | None] = []
        self.input_arrived = asyncio.Event()
        #: Server requests (approvals, ``PendingRequest``) still open; the turn's end resolves them.
        self.open_requests: dict[int, PendingRequest] = {}
        #: The files this turn's patches changed, for ``turn/diff/updated`` (None until the first patch).
        self.diff: TurnDiffTracker | None = None
        self.output_schema: JsonObj | None = None
        #: The client's id for the opening user message (``clientId`` of its item), e.g. a queued submission's.
        self.client_message_id: str | None = None
        #: turn/settings/update: model, effort, summary and serviceTier for this turn's later requests only.
        self.step_settings: dict[str, str | None] = {}

    def model(self, thread_model: str) -> str:
        """The model this turn's next request uses: a turn/settings/update's, else the thread's."""
        return self.step_settings.get("model") or thread_model

    def keep_item(self, item: JsonObj) -> None:
        """Keep a completed item. One with the id of an earlier item of this turn replaces it in place, as the
        stored turn is rebuilt (``store.reconstruct``) and as Codex shows it; the live notifications show both."""
        item_id = item.get("id")
        if isinstance(item_id, str):
            self.started_items.pop(item_id, None)
        for index, earlier in enumerate(self.items):
            if item_id is not None and earlier.get("id") == item_id:
                self.items[index] = item
                return
        self.items.append(item)

    def note_started(self, item: JsonObj) -> None:
        """Remember a tool item announced with ``item/started`` until ``keep_item`` keeps its completed form.

        Codex's active-turn snapshot shows a tool call from its begin event (a command in progress) but a
        streamed message only once it is complete, so text that arrives in deltas is not remembered here.
        """
        item_id = item.get("id")
        if item.get("type") in _STREAMED_TYPES:
            return
        if isinstance(item_id, str) and not any(kept.get("id") == item_id for kept in self.items):
            self.started_items[item_id] = item

    def live_wire(self) -> JsonObj:
        """The full Turn dict with the items still in progress after the completed ones (what a client
        joining mid-turn is shown); the stored turn (``wire(view="full")``) keeps completed items only."""
        wire = self.wire(view="full")
        if not self.ended:
            wire["items"] = [*wire["items"], *self.started_items.values()]
        return wire

    @property
    def ended(self) -> bool:
        """Whether the turn has ended (completed, interrupted or failed)."""
        return self.status.ended

    def apply(self, event: TurnEvent) -> TurnStatus:
        """Move the turn's status by ``event``; ``IllegalTurnTransition`` where the table allows no move."""
        self.status = advance(self.id, self.status, event)
        return self.status

    def finish(self, event: TurnEvent, error: JsonObj | None = None) -> TurnStatus:
        """End the turn (complete, abort or fail); a second end raises ``IllegalTurnTransition``."""
        if event not in _END_EVENTS:
            raise ValueError(f"{event.value} does not end a turn")
        status = self.apply(event)
        self.error = error
        self.completed_at = int(time.time())
        self.duration_ms = int((time.monotonic() - self._t0) * 1000)
        return status

    def wire(self, *, view: str) -> JsonObj:
        """The v2 Turn dict; ``view`` is notLoaded (no items), summary (final message) or full."""
        if view == "full":
            items = list(self.items)
        elif view == "summary" and self.last_agent_message is not None and self.status is TurnStatus.COMPLETED:
            items = [self.last_agent_message]
        else:
            items = []
        return {
            "id": self.id,
            "rootTurnId": self.id,
            "items": items,
            "itemsView": view,
            "status": self.status.wire,
            "error": self.error,
            "startedAt": self.started_at if view != "start" else None,
            "completedAt": self.completed_at,
            "durationMs": self.duration_ms,
        }


async def fan_out(sessions: Iterable[Subscriber], method: str, params: JsonObj) -> list[Subscriber]:
    """Send one notification to several connections; returns those that stalled ``SLOW_SUBSCRIBER_S``.

    It is encoded once and the same bytes object goes to every connection that wants it: the wire has no
    per-connection part (no jsonrpc field, and one ``emittedAtMs`` for the one event).
    """
    data: bytes | None = None
    waiting: list[Subscriber] = []
    for session in sessions:
        if not session.closed.is_set() and session.wants(method):
            data = data or session.encode_notification(method, params)
            if not session.offer(data):  # where there is room it is queued at once: no coroutine per connection
                waiting.append(session)  # a full outbox is waited on once every other connection has it
    return [s for s in waiting if not await s.send_within(data, SLOW_SUBSCRIBER_S)] if data else []


class ThreadRuntime:
    """A loaded thread: everything turns need, and the subscribers that see its notifications."""

    def __init__(
        self,
        *,
        thread_id: str,
        meta: JsonObj,
        settings: ThreadSettings,
        writer: RolloutWriter,
        services: ThreadServices,
        history: list[JsonObj] | None = None,
        turns: list[JsonObj] | None = None,
        token_usage: JsonObj | None = None,
        name: str | None = None,
        preview: str = "",
        created_at: int | None = None,
        history_initialization: str = "new",
    ) -> None:
        self.id = thread_id
        self.meta = meta
        self.settings = settings
        self.writer = writer
        #: Where its tools run, its skills and exec sessions (``AppServer.thread_services``).
        self.services = services
        self.history: list[JsonObj] = history or []
        #: Context tag -> (history entries scanned, the latest text with that tag): lets each turn look at
        #: only the entries added since the last one (the history only grows).
        self.context_seen: dict[str, tuple[int, str | None]] = {}
        self.turns: list[JsonObj] = turns or []
        self.total_usage: JsonObj = dict(token_usage["total"]) if token_usage else empty_usage()
        self.last_usage: JsonObj | None = dict(token_usage["last"]) if token_usage else None
        self.name = name
        self.preview = preview
        self.created_at = created_at or int(time.time())
        self.updated_at = self.created_at
        self.history_initialization = history_initialization
        self.subscribers: set[Subscriber] = set()
        self._active: TurnState | None = None
        self._driver: TurnDriver | None = None
        #: The model that produced the history so far (a switch is announced to the next one).
        self.model_seen: str | None = None
        self.system_error = False
        self.approved_commands: set[str] = set()
        #: argv prefixes the user allowed with acceptWithExecpolicyAmendment (also kept in the rules file).
        self.approved_prefixes: list[tuple[str, ...]] = []
        #: Files whose patches the user accepted for the session (acceptForSession on a file change).
        self.approved_files: set[Path] = set()
        #: Where persisted approval rules live (set by the manager; None keeps them in memory only).
        self.codex_home: Path | None = None
        self.window_number = 0
        self.lock = asyncio.Lock()
        #: thread/start's ``config`` overrides: its tool switches (``features.*``, ``web_search``) apply on top
        #: of config.toml's (``tools.toolset``).
        self.tool_config: JsonObj = {}
        #: thread/queue/*: user submissions waiting for the thread to be idle, in order.
        self.queued: list[JsonObj] = []
        #: Model-only messages (a sub-agent's completion notice) for the active turn's next request.
        self.pending_context: list[JsonObj] = []
        #: Run after a turn ends with the thread idle (the queue starts its next submission).
        self.idle_hook: Callable[[], Awaitable[None]] | None = None
        #: thread/increment_elicitation: approvals pending outside the app-server's own requests.
        self.out_of_band_elicitations = 0
        #: Every client connection, subscribed or not: the audience of ``notices.BROADCAST`` notifications.
        self.connections: Callable[[], Iterable[Subscriber]] = tuple

    # -- the turn lifecycle (every status change goes through ``TurnState.apply``) ------------------
    @property
    def active(self) -> TurnState | None:
        """The turn in progress, if any."""
        turn = self._active
        return turn if turn is not None and not turn.ended else None

    def start_turn(self, turn: TurnState, driver: TurnDriver, spawn: Spawn) -> Callable[[], Awaitable[None]]:
        """Make ``turn`` the active one; returns the launcher to run once ``turn/start`` has answered."""
        if self.active is not None:
            raise RuntimeError(f"thread {self.id} already runs turn {self.active.id}")
        self._active, self._driver = turn, driver

        async def launch() -> None:
            interrupting = turn.status is TurnStatus.INTERRUPTING
            turn.apply(TurnEvent.LAUNCH)
            turn.task = task = spawn(driver.run(), name=f"turn-{turn.id}")
            if interrupting:  # after the task's first step, so the runner sees the cancel and ends the turn
                asyncio.get_running_loop().call_soon(task.cancel)

        return launch

    def steer(self, inputs: list[JsonObj], client_id: str | None = None) -> TurnState:
        """Add input to the active turn (turn/steer, or a turn/start while one runs); ``client_id`` is the
        request's clientUserMessageId, shown as the clientId of the user message it becomes."""
        turn = self.active
        if turn is None:
            raise RuntimeError(f"thread {self.id} has no active turn")
        turn.pending_inputs.append(inputs)
        turn.pending_client_ids.append(client_id)
        if self._driver is not None:
            self._driver.steer()
        return turn

    def interrupt(self) -> asyncio.Task[None] | None:
        """Ask the active turn to stop; returns its task (None when not launched yet or already ended)."""
        turn = self.active
        if turn is None:
            return None
        turn.apply(TurnEvent.INTERRUPT)
        if turn.task is not None and not turn.task.done():
            turn.task.cancel()
            return turn.task
        return None

    async def interrupt_and_wait(self, timeout: float) -> None:
        """Interrupt the active turn and wait, bounded, until it has ended."""
        turn = self.active
        if turn is None:
            return
        self.interrupt()
        deadline = asyncio.get_running_loop().time() + timeout
        while not turn.ended and turn.task is None and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)  # accepted a moment ago: its launch is about to run
        if turn.task is not None and not turn.task.done():
            await asyncio.wait({turn.task}, timeout=max(0.0, deadline - asyncio.get_running_loop().time()))

    def end_turn(self, turn: TurnState, event: TurnEvent, error: JsonObj | None) -> TurnStatus:
        """The runner's last word on ``turn``: end it, keep its snapshot and make the thread idle again."""
        status = turn.finish(event, error)
        self.turns.append(turn.wire(view="full"))
        self.system_error = status is TurnStatus.FAILED
        if self._active is turn:
            self._active, self._driver = None, None
        return status

    async def record_turn_start(self, turn: TurnState) -> None:
        """Write the turn's start to the rollout with the repository state of the thread's folder (Codex's
        gitInfo is taken when a turn starts), and keep that gitInfo on the loaded thread."""
        def write() -> JsonObj | None:
            git = read_git_info(str(self.settings.cwd))
            self.writer.turn_started(turn.id, started_at=turn.started_at, git_info=git)
            return git

        git = await asyncio.to_thread(write)
        if git is not None:
            self.meta["gitInfo"] = git

    @property
    def ephemeral(self) -> bool:
        """Whether the thread was started ephemeral (nothing of it is kept on disk)."""
        return bool(self.meta.get("ephemeral"))

    def status(self) -> JsonObj:
        """The v2 ThreadStatus: active (perhaps awaiting approval), systemError after failing, or idle."""
        active = self.active
        if active is not None:
            asks = {p.method == "item/tool/requestUserInput" for p in active.open_requests.values()}
            flags = [flag for flag, on in (("waitingOnApproval", False in asks), ("waitingOnUserInput", True in asks))
                     if on]
            return {"type": "active", "activeFlags": flags}
        if self.system_error:
            return {"type": "systemError"}
        return {"type": "idle"}

    def token_usage_wire(self) -> JsonObj | None:
        """The v2 ThreadTokenUsage (total, last, context window), or None before the first model response."""
        if self.last_usage is None:
            return None
        return {"total": dict(self.total_usage), "last": dict(self.last_usage),
                "modelContextWindow": MODEL_CONTEXT_WINDOW}

    async def emit(self, notice: Notice) -> None:
        """Send to every subscriber, in order (a ``notices.BROADCAST`` one to every other connection too).

        One subscriber gets plain backpressure: a client that stops reading slows the turn down. With
        several, a subscriber that has not read for ``SLOW_SUBSCRIBER_S`` is unsubscribed instead, so it
        cannot stall the others; an unsubscribed connection that stops reading just misses the notice.
        """
        method, params = notice.method, notice.params
        active = self.active
        if method == "item/started" and active is not None and params.get("turnId") == active.id:
            item = params.get("item")
            if isinstance(item, dict):
                active.note_started(item)
        live = [s for s in self.subscribers if not s.closed.is_set()]
        if len(live) != len(self.subscribers):
            self.subscribers.intersection_update(live)
        others = [s for s in self.connections() if s not in self.subscribers and not s.closed.is_set()] \
            if method in notices.BROADCAST else []
        if len(live) == 1 and not others:
            await live[0].notify(method, params)
            return
        for session in await fan_out([*live, *others], method, params):
            if session in self.subscribers:
                logger.warning("unsubscribing connection %s from thread %s: it stopped reading", session.id, self.id)
                self.subscribers.discard(session)

    async def emit_status(self) -> None:
        """Tell the subscribers the thread's current status (``thread/status/changed``)."""
        await self.emit(notices.thread_status_changed(self.id, self.status()))
