"""What the thread domain is handed from outside, in a module that imports nothing of the thread domain.

``Subscriber`` is a client connection as a thread sees it; ``ThreadSettings`` are a thread's sticky settings;
``ThreadServices`` is what a loaded thread uses from outside (where its tools run, its skills, its exec
sessions, its MCP servers, its read states). They sit here, below ``threads.state``, ``tools.pending`` and
``threads.services``, so each of those can name them without importing another (no import circle, not even
one that only type annotations would need).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from app_server.tools.code_mode.cells import CodeCells
from pycodex.json_types import JsonObj, JsonValue

if TYPE_CHECKING:
    from app_server.environments import ThreadEnvironment
    from app_server.mcp.service import ThreadMcp
    from app_server.store.thread_state import ThreadStateDb
    from app_server.threads.agent_contracts import SubAgents
    from app_server.threads.skills_glue import ThreadSkills
    from app_server.tools.unified_exec import UnifiedExec

__all__ = ["Subscriber", "ThreadServices", "ThreadSettings"]


class Subscriber(Protocol):
    """A client connection as the thread domain sees it (``app_server.connection.Session`` is one):
    it receives the thread's notifications and may be asked to answer server requests (approvals)."""

    id: int
    closed: asyncio.Event
    client_name: str
    session_source: str
    #: Callbacks run once when the connection closes (their results are ignored).
    on_close: list[Callable[[], Any]]

    async def notify(self, method: str, params: JsonValue) -> None:
        """Send a notification; waits while the connection's outgoing queue is full."""

    async def notify_within(self, method: str, params: JsonValue, timeout: float) -> bool:
        """Send a notification unless the queue stays full for ``timeout`` seconds; False when it did."""

    def wants(self, method: str) -> bool:
        """Whether this client gets ``method`` at all (opt-outs, experimental-only notifications)."""

    def encode_notification(self, method: str, params: JsonValue) -> bytes:
        """The notification's wire bytes, stamped now (a broadcast encodes once for every connection)."""

    def offer(self, data: bytes) -> bool:
        """Queue encoded bytes at once if there is room; False when a write would have to wait."""

    async def send_within(self, data: bytes, timeout: float) -> bool:
        """Write encoded bytes unless the queue stays full for ``timeout`` seconds; False when it did."""

    async def request(self, method: str, params: JsonValue, *, timeout: float = ...) -> JsonValue:
        """Ask the client and wait for its answer's result (raises on an error answer or a timeout)."""

    def next_request_id(self) -> int:
        """The id the next ``request`` will use on this connection."""


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
    #: The active permission profile (``:read-only``, ``:workspace``...), None when a sandbox mode was set
    #: directly (config ``sandbox_mode``, a ``sandbox`` or ``sandboxPolicy`` param), as Codex reports it.
    permission_profile: str | None = None

    def to_record(self) -> JsonObj:
        """The settings as the rollout's turn-context record stores them."""
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


@dataclass(frozen=True, slots=True)
class ThreadServices:
    """What one loaded thread uses from outside, built once per thread (``AppServer.thread_services``)."""

    environment: ThreadEnvironment
    skills: ThreadSkills
    exec_sessions: UnifiedExec
    #: The thread's MCP servers (started with the thread, stopped when it unloads).
    mcp: ThreadMcp | None = None
    #: Read states, goals and sections (thread_state.sqlite); None where nothing persists them (unit tests).
    read_states: ThreadStateDb | None = None
    #: Code mode's exec cells (scripts still running, values they stored); killed when the thread unloads.
    code_cells: CodeCells = field(default_factory=CodeCells)
    #: The server's sub-agents (the multi_agent_v1 tools); None where none can be spawned (unit tests).
    agents: SubAgents | None = None
