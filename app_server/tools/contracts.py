"""What a tool sees of the running turn and what it answers: the contracts between the tools and the runner.

A tool gets a ``ToolContext`` (the runner is one) and returns a ``ToolOutcome``. ``ToolThread`` and
``ToolTurn`` say which part of ``threads.state.ThreadRuntime`` and ``TurnState`` a tool may touch, so the
tools depend on these protocols rather than on the thread state itself (which is what keeps
``threads.state`` and the tools out of each other's imports). mypy checks that the runtime classes satisfy
them where the runner hands itself to a tool.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pycodex.json_types import JsonObj

if TYPE_CHECKING:
    from app_server.protocol.notices import Notice
    from app_server.threads.contracts import Subscriber, ThreadServices, ThreadSettings
    from app_server.threads.sampling import ToolCall
    from app_server.tools.pending import PendingRequest
    from app_server.tools.turn_diff import TurnDiffTracker

__all__ = ["ToolContext", "ToolOutcome", "ToolRouter", "ToolThread", "ToolTurn"]


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What one tool call produced: the output item the runner records for the model."""

    output: JsonObj
    #: The user cancelled from an approval prompt: after recording ``output`` the turn ends as interrupted.
    end_turn: bool = False
    #: More items answering the same call, recorded after ``output`` (code mode's ``notify`` texts).
    extra: tuple[JsonObj, ...] = ()
    #: The call's environment was lost under it (a provided environment's box exited): after recording
    #: ``output`` the turn ends as failed with this ``TurnError``.
    turn_error: JsonObj | None = None


class ToolThread(Protocol):
    """The loaded thread as a tool sees it (``threads.state.ThreadRuntime`` is one)."""

    @property
    def id(self) -> str:
        """The thread id."""

    @property
    def settings(self) -> ThreadSettings:
        """The thread's sticky settings (cwd, approval policy, sandbox)."""

    @property
    def services(self) -> ThreadServices:
        """Where the thread's tools run, its skills, exec sessions and MCP servers."""

    @property
    def subscribers(self) -> set[Subscriber]:
        """The connections that see the thread's notifications (and may answer its approvals)."""

    @property
    def turns(self) -> list[JsonObj]:
        """The stored snapshots of the thread's ended turns."""

    @property
    def codex_home(self) -> Path | None:
        """Where persisted approval rules live (None keeps them in memory only)."""

    @property
    def approved_commands(self) -> set[str]:
        """Commands the user approved for the rest of the session."""

    @property
    def approved_prefixes(self) -> list[tuple[str, ...]]:
        """argv prefixes the user allowed (acceptWithExecpolicyAmendment)."""

    @property
    def approved_files(self) -> set[Path]:
        """Files whose patches the user accepted for the session."""

    async def emit(self, notice: Notice) -> None:
        """Send ``notice`` to the thread's subscribers."""

    async def emit_status(self) -> None:
        """Announce the thread's current status (``thread/status/changed``)."""


class ToolTurn(Protocol):
    """The running turn as a tool sees it (``threads.state.TurnState`` is one)."""

    @property
    def id(self) -> str:
        """The turn id."""

    @property
    def ended(self) -> bool:
        """Whether the turn has ended (a late item then goes into its stored snapshot)."""

    @property
    def items(self) -> list[JsonObj]:
        """The turn's completed items so far."""

    @property
    def open_requests(self) -> dict[int, PendingRequest]:
        """Server requests (approvals) still open; the turn's end resolves them."""

    @property
    def pending_inputs(self) -> list[list[JsonObj]]:
        """Input steered into the turn that the model has not been sent yet."""

    @property
    def input_arrived(self) -> asyncio.Event:
        """Set when input is steered into the turn (code mode's ``sleep`` ends on it)."""

    #: The files this turn's patches changed (None until the first patch); the tool sets it, the runner
    #: reports it after each model response.
    diff: TurnDiffTracker | None


class ToolContext(Protocol):
    """The slice of a running turn a tool may use."""

    @property
    def thread(self) -> ToolThread:
        """The thread the turn runs in."""

    @property
    def turn(self) -> ToolTurn:
        """The running turn."""

    @property
    def origin(self) -> Subscriber | None:
        """The connection that started the turn (asked first for approvals)."""

    async def complete_item(self, item: JsonObj) -> None:
        """Store ``item`` durably, then announce ``item/completed``."""


class ToolRouter(Protocol):
    """Runs one tool call of the model (``tools.router.route_tool_call`` is one)."""

    async def __call__(self, ctx: ToolContext, call: ToolCall) -> ToolOutcome:
        """Carry out ``call`` and return what the model is told."""
