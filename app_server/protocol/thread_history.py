"""Params and responses of thread history, read state, goals and background terminals (Codex 0.169 shapes):
thread/items/list, thread/items/read, thread/readState/update, thread/goal/*, thread/backgroundTerminals/*."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from .base import ParamsModel, WireModel
from .common import OptionalU32, SortDirection, ThreadId, ThreadReadState

ThreadGoalStatus = Literal["active", "paused", "blocked", "usageLimited", "budgetLimited", "complete"]
GoalOrigin = Literal["user", "automatic"]
Int64 = Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]


class ItemAnchor(WireModel):
    type: Literal["item"]
    item_id: str


class OutputDeferral(WireModel):
    command_execution: bool = False
    mcp_tool_call: bool = False


class ThreadItemsListParams(ParamsModel):
    METHOD: ClassVar[str] = "thread/items/list"

    thread_id: ThreadId
    turn_id: str | None = None
    cursor: str | ItemAnchor | None = None
    limit: OptionalU32 = None
    sort_direction: SortDirection | None = None
    defer_output: OutputDeferral | None = None


class ThreadItemEntry(WireModel):
    turn_id: str
    item: dict[str, Any]
    started_at_ms: int | None = None
    completed_at_ms: int | None = None


class ThreadItemsListResponse(WireModel):
    data: list[ThreadItemEntry]
    next_cursor: str | None = None
    backwards_cursor: str | None = None


class ThreadItemsReadParams(ParamsModel):
    METHOD: ClassVar[str] = "thread/items/read"

    thread_id: ThreadId
    turn_id: str
    item_ids: list[str]


class ThreadItemsReadResponse(WireModel):
    data: list[ThreadItemEntry]


class ReadStateOperation(WireModel):
    type: Literal["read", "unread"]


class ThreadReadStateUpdateParams(ParamsModel):
    METHOD: ClassVar[str] = "thread/readState/update"

    thread_id: ThreadId
    expected_revision: str
    operation: ReadStateOperation


class ThreadReadStateUpdateResponse(WireModel):
    read_state: ThreadReadState


class ThreadGoal(WireModel):
    thread_id: str
    objective: str
    status: ThreadGoalStatus
    token_budget: int | None = None
    tokens_used: int
    time_used_seconds: int
    created_at: int
    updated_at: int


class ThreadGoalGetParams(ParamsModel):
    METHOD: ClassVar[str] = "thread/goal/get"

    thread_id: ThreadId


class ThreadGoalGetResponse(WireModel):
    goal: ThreadGoal | None = None


class ThreadGoalSetParams(ParamsModel):
    METHOD: ClassVar[str] = "thread/goal/set"

    thread_id: ThreadId
    objective: str | None = None
    status: ThreadGoalStatus | None = None
    token_budget: Int64 | None = None
    origin: GoalOrigin | None = None


class ThreadGoalSetResponse(WireModel):
    goal: ThreadGoal


class ThreadGoalClearParams(ParamsModel):
    METHOD: ClassVar[str] = "thread/goal/clear"

    thread_id: ThreadId
    origin: GoalOrigin | None = None


class ThreadGoalClearResponse(WireModel):
    cleared: bool


class BackgroundTerminalsListParams(ParamsModel):
    METHOD: ClassVar[str] = "thread/backgroundTerminals/list"

    thread_id: ThreadId
    cursor: str | None = None
    limit: OptionalU32 = None


class BackgroundTerminal(WireModel):
    process_id: str
    item_id: str
    command: str
    cwd: str
    os_pid: int | None = None
    cpu_percent: float | None = None
    rss_kb: int | None = None


class BackgroundTerminalsListResponse(WireModel):
    data: list[BackgroundTerminal]
    next_cursor: str | None = None


class BackgroundTerminalsCleanParams(ParamsModel):
    METHOD: ClassVar[str] = "thread/backgroundTerminals/clean"

    thread_id: ThreadId


class BackgroundTerminalsTerminateParams(ParamsModel):
    METHOD: ClassVar[str] = "thread/backgroundTerminals/terminate"

    thread_id: ThreadId
    process_id: str


class BackgroundTerminalsTerminateResponse(WireModel):
    terminated: bool
