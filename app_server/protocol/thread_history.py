"""Params and responses of thread history, read state, goals and background terminals (Codex 0.169 shapes):
thread/items/list, thread/items/read, thread/readState/update, thread/goal/*, thread/backgroundTerminals/*."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from pycodex.json_types import JsonObj

from .base import ParamsModel, WireModel
from .common import OptionalU32, SortDirection, ThreadId, ThreadReadState

ThreadGoalStatus = Literal["active", "paused", "blocked", "usageLimited", "budgetLimited", "complete"]
GoalOrigin = Literal["user", "automatic"]
Int64 = Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]


class ItemAnchor(WireModel):
    """The `"type": "item"` variant (`ItemAnchor`)."""

    type: Literal["item"]
    item_id: str


class OutputDeferral(WireModel):
    """Codex's `ThreadItemOutputDeferral`: whose saved output a listing may leave out (successful items only)."""

    command_execution: bool = False
    mcp_tool_call: bool = False


class ThreadItemsListParams(ParamsModel):
    """Params of `thread/items/list`."""

    METHOD: ClassVar[str] = "thread/items/list"

    thread_id: ThreadId
    turn_id: str | None = None
    cursor: str | ItemAnchor | None = None
    limit: OptionalU32 = None
    sort_direction: SortDirection | None = None
    defer_output: OutputDeferral | None = None


class ThreadItemEntry(WireModel):
    """One item of a thread's history, with its turn and timestamps."""

    turn_id: str
    item: JsonObj
    started_at_ms: int | None = None
    completed_at_ms: int | None = None


class ThreadItemsListResponse(WireModel):
    """The result of `thread/items/list`."""

    data: list[ThreadItemEntry]
    next_cursor: str | None = None
    backwards_cursor: str | None = None


class ThreadItemsReadParams(ParamsModel):
    """Params of `thread/items/read`."""

    METHOD: ClassVar[str] = "thread/items/read"

    thread_id: ThreadId
    turn_id: str
    item_ids: list[str]


class ThreadItemsReadResponse(WireModel):
    """The result of `thread/items/read`."""

    data: list[ThreadItemEntry]


class ReadStateOperation(WireModel):
    """What `thread/readState/update` does (`type`)."""

    type: Literal["read", "unread"]


class ThreadReadStateUpdateParams(ParamsModel):
    """Params of `thread/readState/update`."""

    METHOD: ClassVar[str] = "thread/readState/update"

    thread_id: ThreadId
    expected_revision: str
    operation: ReadStateOperation


class ThreadReadStateUpdateResponse(WireModel):
    """The result of `thread/readState/update`."""

    read_state: ThreadReadState


class ThreadGoal(WireModel):
    """A thread's goal: the objective, its status, token budget and what it has used so far."""

    thread_id: str
    objective: str
    status: ThreadGoalStatus
    token_budget: int | None = None
    tokens_used: int
    time_used_seconds: int
    created_at: int
    updated_at: int


class ThreadGoalGetParams(ParamsModel):
    """Params of `thread/goal/get`."""

    METHOD: ClassVar[str] = "thread/goal/get"

    thread_id: ThreadId


class ThreadGoalGetResponse(WireModel):
    """The result of `thread/goal/get`."""

    goal: ThreadGoal | None = None


class ThreadGoalSetParams(ParamsModel):
    """Params of `thread/goal/set`."""

    METHOD: ClassVar[str] = "thread/goal/set"

    thread_id: ThreadId
    objective: str | None = None
    status: ThreadGoalStatus | None = None
    token_budget: Int64 | None = None
    origin: GoalOrigin | None = None


class ThreadGoalSetResponse(WireModel):
    """The result of `thread/goal/set`."""

    goal: ThreadGoal


class ThreadGoalClearParams(ParamsModel):
    """Params of `thread/goal/clear`."""

    METHOD: ClassVar[str] = "thread/goal/clear"

    thread_id: ThreadId
    origin: GoalOrigin | None = None


class ThreadGoalClearResponse(WireModel):
    """The result of `thread/goal/clear`."""

    cleared: bool


class BackgroundTerminalsListParams(ParamsModel):
    """Params of `thread/backgroundTerminals/list`."""

    METHOD: ClassVar[str] = "thread/backgroundTerminals/list"

    thread_id: ThreadId
    cursor: str | None = None
    limit: OptionalU32 = None


class BackgroundTerminal(WireModel):
    """A terminal a thread left running in the background: process, command, cwd, CPU and memory."""

    process_id: str
    item_id: str
    command: str
    cwd: str
    os_pid: int | None = None
    cpu_percent: float | None = None
    rss_kb: int | None = None


class BackgroundTerminalsListResponse(WireModel):
    """The result of `thread/backgroundTerminals/list`."""

    data: list[BackgroundTerminal]
    next_cursor: str | None = None


class BackgroundTerminalsCleanParams(ParamsModel):
    """Params of `thread/backgroundTerminals/clean`."""

    METHOD: ClassVar[str] = "thread/backgroundTerminals/clean"

    thread_id: ThreadId


class BackgroundTerminalsTerminateParams(ParamsModel):
    """Params of `thread/backgroundTerminals/terminate`."""

    METHOD: ClassVar[str] = "thread/backgroundTerminals/terminate"

    thread_id: ThreadId
    process_id: str


class BackgroundTerminalsTerminateResponse(WireModel):
    """The result of `thread/backgroundTerminals/terminate`."""

    terminated: bool
