"""Runtime state of a loaded thread and of its active turn.

``ThreadRuntime`` owns what lives only while a thread is loaded: its sticky settings, model history,
turns, token usage, subscribers and rollout writer. ``TurnState`` is the explicit lifecycle of one turn;
``finish`` is the only way a turn ends, and it refuses a second end, so "exactly one ``turn/completed``
per turn" is enforced in one place.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app_server.connection import Session
    from app_server.store import RolloutWriter

__all__ = ["ThreadRuntime", "ThreadSettings", "TurnState", "empty_usage"]

logger = logging.getLogger(__name__)

JsonObj = dict[str, Any]
MODEL_CONTEXT_WINDOW = 258_400
#: How long a thread with several subscribers waits for one that does not read.
SLOW_SUBSCRIBER_S = 1.0


def empty_usage() -> JsonObj:
    return {
        "totalTokens": 0,
        "inputTokens": 0,
        "cachedInputTokens": 0,
        "cacheWriteInputTokens": 0,
        "outputTokens": 0,
        "reasoningOutputTokens": 0,
    }


@dataclass
class ThreadSettings:
    """Sticky per-thread settings; turn/start overrides replace them for later turns too."""

    model: str
    model_provider: str
    cwd: Path
    approval_policy: str = "on-request"
    approvals_reviewer: str = "user"
    sandbox_mode: str = "workspace-write"
    base_instructions: str | None = None
    developer_instructions: str | None = None
    effort: str | None = None
    summary: str | None = None
    service_tier: str | None = None
    writable_roots: list[str] = field(default_factory=list)
    network_access: bool = False

    def to_record(self) -> JsonObj:
        return {
            "model": self.model,
            "modelProvider": self.model_provider,
            "cwd": str(self.cwd),
            "approvalPolicy": self.approval_policy,
            "approvalsReviewer": self.approvals_reviewer,
            "sandbox": self.sandbox_mode,
            "effort": self.effort,
            "summary": self.summary,
        }


TURN_END_STATUSES = ("completed", "interrupted", "failed")


class TurnState:
    """One turn: ``inProgress`` until ``finish`` moves it to completed, interrupted or failed."""

    def __init__(self, turn_id: str, *, inputs: list[JsonObj]) -> None:
        self.id = turn_id
        self.status = "inProgress"
        self.inputs = inputs
        self.started_at = int(time.time())
        self._t0 = time.monotonic()
        self.items: list[JsonObj] = []
        self.last_agent_message: JsonObj | None = None
        self.error: JsonObj | None = None
        self.completed_at: int | None = None
        self.duration_ms: int | None = None
        self.task: asyncio.Task[None] | None = None
        self.interrupt_requested = False
        #: Input that arrived while the turn ran (turn/steer, or turn/start merged into this turn).
        self.pending_inputs: list[list[JsonObj]] = []
        self.input_arrived = asyncio.Event()
        #: Server requests (approvals, ``PendingRequest``) still open; the turn's end resolves them.
        self.open_requests: dict[int, Any] = {}
        self.output_schema: JsonObj | None = None

    @property
    def ended(self) -> bool:
        return self.status != "inProgress"

    def finish(self, status: str, error: JsonObj | None = None) -> None:
        if status not in TURN_END_STATUSES:
            raise ValueError(f"invalid turn end status {status!r}")
        if self.ended:
            raise RuntimeError(f"turn {self.id} already ended as {self.status}")
        self.status = status
        self.error = error
        self.completed_at = int(time.time())
        self.duration_ms = int((time.monotonic() - self._t0) * 1000)

    def wire(self, *, view: str) -> JsonObj:
        """The v2 Turn dict; ``view`` is notLoaded (no items), summary (final message) or full."""
        if view == "full":
            items = list(self.items)
        elif view == "summary" and self.last_agent_message is not None and self.status == "completed":
            items = [self.last_agent_message]
        else:
            items = []
        return {
            "id": self.id,
            "rootTurnId": self.id,
            "items": items,
            "itemsView": view,
            "status": self.status,
            "error": self.error,
            "startedAt": self.started_at if view != "start" else None,
            "completedAt": self.completed_at,
            "durationMs": self.duration_ms,
        }


class ThreadRuntime:
    """A loaded thread: everything turns need, and the subscribers that see its notifications."""

    def __init__(
        self,
        *,
        thread_id: str,
        meta: JsonObj,
        settings: ThreadSettings,
        writer: RolloutWriter,
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
        self.history: list[JsonObj] = history or []
        self.turns: list[JsonObj] = turns or []
        self.total_usage: JsonObj = dict(token_usage["total"]) if token_usage else empty_usage()
        self.last_usage: JsonObj | None = dict(token_usage["last"]) if token_usage else None
        self.name = name
        self.preview = preview
        self.created_at = created_at or int(time.time())
        self.updated_at = self.created_at
        self.history_initialization = history_initialization
        self.subscribers: set[Session] = set()
        self.active: TurnState | None = None
        #: The model that produced the history so far (a switch is announced to the next one).
        self.model_seen: str | None = None
        self.runner: Any = None
        self.system_error = False
        self.approved_commands: set[str] = set()
        #: argv prefixes the user allowed with acceptWithExecpolicyAmendment (also kept in the rules file).
        self.approved_prefixes: list[tuple[str, ...]] = []
        #: Where persisted approval rules live (set by the manager; None keeps them in memory only).
        self.codex_home: Path | None = None
        self.window_number = 0
        self.lock = asyncio.Lock()
        #: Set by the manager: the unified exec sessions of this thread (tools layer).
        self.exec_sessions: Any = None
        self.environment: Any = None
        self.environment_id = "local"
        self.has_environment = True
        #: Skills of this thread (``app_server.threads.skills_glue.ThreadSkills``), set by the app.
        self.skills: Any = None
        #: The login-shell snapshot for local commands (None: run a real login shell each time).
        self.shell_snapshot: Any = None
        #: Reconnects the default environment (set by the app); None in unit tests.
        self.reconnect: Any = None
        self.environment_error: str | None = None
        #: Builds the sandbox for a command in a given cwd (None: run unsandboxed).
        self.sandbox_factory: Any = None
        #: The read-state store (``app_server.store.thread_state.ThreadStateDb``), set by the app.
        self.read_states: Any = None
        #: thread/start asked for no environment (``environments: []``): no tools, no commands.
        self.environments_disabled = False
        self.shell_tool_enabled = True

    def sandbox_for(self, cwd: Path) -> Any:
        if self.sandbox_factory is None:
            return None
        return self.sandbox_factory(self.settings, cwd)

    @property
    def ephemeral(self) -> bool:
        return bool(self.meta.get("ephemeral"))

    def status(self) -> JsonObj:
        if self.active is not None and not self.active.ended:
            flags = ["waitingOnApproval"] if self.active.open_requests else []
            return {"type": "active", "activeFlags": flags}
        if self.system_error:
            return {"type": "systemError"}
        return {"type": "idle"}

    def token_usage_wire(self) -> JsonObj | None:
        if self.last_usage is None:
            return None
        return {"total": dict(self.total_usage), "last": dict(self.last_usage),
                "modelContextWindow": MODEL_CONTEXT_WINDOW}

    async def emit(self, method: str, params: JsonObj) -> None:
        """Send to every subscriber, in order.

        One subscriber gets plain backpressure: a client that stops reading slows the turn down. With
        several, a subscriber that has not read for ``SLOW_SUBSCRIBER_S`` is unsubscribed instead, so it
        cannot stall the others.
        """
        live = [s for s in self.subscribers if not s.closed.is_set()]
        if len(live) != len(self.subscribers):
            self.subscribers.intersection_update(live)
        if len(live) == 1:
            await live[0].notify(method, params)
            return
        for session in live:
            if not await session.notify_within(method, params, SLOW_SUBSCRIBER_S):
                logger.warning("unsubscribing connection %s from thread %s: it stopped reading", session.id, self.id)
                self.subscribers.discard(session)

    async def emit_status(self) -> None:
        await self.emit("thread/status/changed", {"threadId": self.id, "status": self.status()})
