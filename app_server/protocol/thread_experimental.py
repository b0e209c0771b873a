"""Params and responses of five experimental Codex 0.169 methods: thread/timeline/list,
thread/prepareApprovedPlan, thread/sample, turn/settings/update and rollout/compress. Field order is Codex's (its
`--experimental` schema); a timeline entry is a plain object, already in Codex's wire shape."""

from __future__ import annotations

from typing import ClassVar, Literal

from pycodex.json_types import JsonObj

from .base import ParamsModel, WireModel
from .common import ApprovalsReviewer, OptionalU32, ReasoningEffort, ReasoningSummary, ThreadId
from .turns import TurnEnvironmentParams

__all__ = [
    "RolloutCompressResponse",
    "ThreadPrepareApprovedPlanParams",
    "ThreadPrepareApprovedPlanResponse",
    "ThreadSampleParams",
    "ThreadSampleResponse",
    "ThreadTimelineListParams",
    "ThreadTimelineListResponse",
    "TurnSettingsUpdateParams",
    "TurnSettingsUpdateResponse",
]


class ThreadTimelineListParams(ParamsModel):
    """Params of `thread/timeline/list`: a page of the thread's timeline, newest first from ``cursor``."""

    METHOD: ClassVar[str] = "thread/timeline/list"

    thread_id: ThreadId
    cursor: str | None = None
    limit: OptionalU32 = None


class ThreadTimelineListResponse(WireModel):
    """The result of `thread/timeline/list`: entries in rollout order (turnStarted, item, realtime,
    turnCompleted; camelCase keys, as Codex 0.169 sends them even where its schema says snake_case)."""

    data: list[JsonObj]
    next_cursor: str | None = None
    active_realtime_session_at_page_start: str | None = None


class ThreadPrepareApprovedPlanParams(ParamsModel):
    """Params of `thread/prepareApprovedPlan`."""

    METHOD: ClassVar[str] = "thread/prepareApprovedPlan"

    thread_id: ThreadId
    markdown: str
    attachment_path: str | None = None


class ThreadPrepareApprovedPlanResponse(WireModel):
    """The result of `thread/prepareApprovedPlan`: the first turn's user prompt."""

    prompt: str


class ThreadSampleParams(ParamsModel):
    """Params of `thread/sample`."""

    METHOD: ClassVar[str] = "thread/sample"

    thread_id: ThreadId
    expected_turn_id: str
    prompt: str
    allow_in_progress_turn: bool = False
    effort: ReasoningEffort | None = None
    disable_mcp: bool = False
    interrupt_on_cancel: bool | None = None
    responsesapi_client_metadata: dict[str, str] | None = None
    thread_source: str | None = None
    turn_trigger: str | None = None


class ThreadSampleResponse(WireModel):
    """The result of `thread/sample`: the one response's text (null after a tool call) and usage."""

    source_turn_id: str
    response_id: str
    text: str | None = None
    input_tokens: int | None = None
    cached_input_tokens: int | None = None
    output_tokens: int | None = None


class TurnSettingsUpdateParams(ParamsModel):
    """Params of `turn/settings/update`: settings for the rest of one running turn."""

    METHOD: ClassVar[str] = "turn/settings/update"

    thread_id: ThreadId
    turn_id: str
    approvals_reviewer: ApprovalsReviewer | None = None
    environments: list[TurnEnvironmentParams] | None = None
    model: str | None = None
    effort: ReasoningEffort | None = None
    summary: ReasoningSummary | None = None
    service_tier: str | None = None


class TurnSettingsUpdateResponse(WireModel):
    """The result of `turn/settings/update`."""

    status: Literal["applied", "targetUnavailable"]


class RolloutCompressResponse(WireModel):
    """The result of `rollout/compress`: ``{}``, the background pass was asked for (not that it ran)."""
