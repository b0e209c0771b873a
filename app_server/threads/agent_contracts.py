"""What the sub-agent tools (``tools.collab_tool``) use of the server's agent registry, in a module that
imports nothing of the thread domain.

``SubAgents`` is the registry as the tools see it (``threads.agents.AgentControl`` is one); it is handed to
each thread in ``ThreadServices.agents``. ``AgentStatus`` is a sub-agent's status as Codex 0.169 reports
it: to the model as snake_case JSON (``"running"``, ``{"completed": "<last message>"}``), to clients as a
``CollabAgentState`` (camelCase status and an optional message). ``CollabError`` carries the text the model
is told when a collab operation is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

from pycodex.json_types import JsonObj, JsonValue

__all__ = ["AgentLimits", "AgentStatus", "CollabError", "SpawnRequest", "SpawnedAgent", "SubAgents"]

StatusKind = Literal["pending_init", "running", "interrupted", "completed", "errored", "shutdown", "not_found"]

_CAMEL: dict[StatusKind, str] = {
    "pending_init": "pendingInit", "running": "running", "interrupted": "interrupted", "completed": "completed",
    "errored": "errored", "shutdown": "shutdown", "not_found": "notFound",
}

#: Codex's defaults for ``[agents] max_threads`` and ``max_depth``.
DEFAULT_MAX_THREADS = 6
DEFAULT_MAX_DEPTH = 1


class CollabError(Exception):
    """A refused collab operation; ``str(exc)`` is what the model is told."""


@dataclass(frozen=True, slots=True)
class AgentStatus:
    """A sub-agent's status; ``message`` is the last agent message (completed) or the error (errored)."""

    kind: StatusKind
    message: str | None = None

    @property
    def final(self) -> bool:
        """Whether the agent is done for now (anything but starting or running), as wait_agent counts it."""
        return self.kind not in ("pending_init", "running")

    @property
    def failed(self) -> bool:
        """Whether a collab item reporting this status ends ``failed`` (errored or unknown agent)."""
        return self.kind in ("errored", "not_found")

    def model_json(self) -> JsonValue:
        """The status as the model reads it (Codex's serde form)."""
        if self.kind in ("completed", "errored"):
            return {self.kind: self.message}
        return self.kind

    def state_wire(self) -> JsonObj:
        """The v2 ``CollabAgentState`` of this status."""
        return {"status": _CAMEL[self.kind], "message": self.message}


@dataclass(frozen=True, slots=True)
class AgentLimits:
    """``[agents]`` config: how many sub-agents may be open at once per root thread, and how deep they nest."""

    max_threads: int = DEFAULT_MAX_THREADS
    max_depth: int = DEFAULT_MAX_DEPTH

    @classmethod
    def from_config(cls, raw: object) -> AgentLimits:
        """The limits from the raw config table (Codex's defaults for a missing or unusable value)."""
        table = raw.get("agents") if isinstance(raw, Mapping) else None
        table = table if isinstance(table, Mapping) else {}
        threads, depth = table.get("max_threads"), table.get("max_depth")
        return cls(
            max_threads=threads if isinstance(threads, int) and threads > 0 else DEFAULT_MAX_THREADS,
            max_depth=depth if isinstance(depth, int) and depth >= 0 else DEFAULT_MAX_DEPTH,
        )

    def allows_spawn_from(self, depth: int) -> bool:
        """Whether a thread at ``depth`` may spawn (as Codex: else it is not even offered the tools)."""
        return depth + 1 <= self.max_depth


@dataclass(frozen=True, slots=True)
class SpawnRequest:
    """What spawn_agent asks for: the child's first input (v2 UserInput dicts) and its model overrides;
    ``fork_call_id``: the spawn call whose parent history the child starts with (fork_context)."""

    parent_id: str
    inputs: list[JsonObj]
    model: str | None = None
    reasoning_effort: str | None = None
    fork_call_id: str | None = None


@dataclass(frozen=True, slots=True)
class SpawnedAgent:
    """A child just started: its thread id, nickname, the model and effort it runs with, its status."""

    thread_id: str
    nickname: str | None
    model: str
    reasoning_effort: str | None
    status: AgentStatus


class SubAgents(Protocol):
    """The server's sub-agents as the collab tools see them (``threads.agents.AgentControl``)."""

    def limits(self) -> AgentLimits:
        """The ``[agents]`` limits in force now."""

    def depth(self, thread_id: str) -> int:
        """How deep ``thread_id`` sits under its root thread (0 for a thread no agent spawned)."""

    def status(self, thread_id: str) -> AgentStatus:
        """The current status of ``thread_id`` (``not_found`` for a thread that is no sub-agent here)."""

    async def spawn(self, request: SpawnRequest) -> SpawnedAgent:
        """Create the child thread and start its first turn; raises CollabError."""

    async def send_input(self, target: str, inputs: list[JsonObj], *, interrupt: bool) -> str:
        """Give ``target`` more input (steering its running turn, or starting a new one); returns the
        submission id. Raises CollabError."""

    async def wait(self, targets: list[str], timeout_s: float) -> dict[str, AgentStatus]:
        """The final statuses among ``targets`` once at least one is final, or {} after ``timeout_s``."""

    async def close(self, target: str) -> AgentStatus:
        """Stop ``target`` (its running turn is interrupted); returns its status before. Raises CollabError."""

    async def resume(self, target: str) -> AgentStatus:
        """Reopen a closed ``target``; returns its status. Raises CollabError."""
