"""Params models of the server notifications pycodex emits, and the method -> model table.

Every server notification goes out as `{"method", "params", "emittedAtMs"}` (see `notification_envelope`).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Annotated, Literal

from pydantic import BaseModel

from pycodex.json_types import JsonObj

from .base import OMIT_IF_NONE, OmittingWireModel, WireModel, to_wire
from .common import (
    ItemId,
    RateLimitSnapshot,
    RemoteControlConnectionStatus,
    RequestId,
    TextRange,
    ThreadId,
    ThreadReadState,
    ThreadStatus,
    ThreadTokenUsage,
    TurnError,
    TurnId,
)
from .items import ThreadItem
from .thread_history import ThreadGoal
from .thread_settings_wire import ThreadSettings
from .threads import Thread
from .turns import Turn


class ErrorNotification(WireModel):
    """Params of the `error` notification."""

    error: TurnError
    will_retry: bool
    thread_id: ThreadId
    turn_id: TurnId


class ThreadStartedNotification(WireModel):
    """Params of the `thread/started` notification."""

    thread: Thread


class ThreadStatusChangedNotification(WireModel):
    """Params of the `thread/status/changed` notification."""

    thread_id: ThreadId
    status: ThreadStatus


class ThreadReadStateChangedNotification(WireModel):
    """Params of the `thread/readState/changed` notification."""

    thread_id: ThreadId
    read_state: ThreadReadState


class ThreadIdNotification(WireModel):
    """Shape shared by thread/archived, thread/unarchived, thread/closed, thread/goal/cleared."""

    thread_id: ThreadId


class ThreadArchivedNotification(ThreadIdNotification):
    """Params of the `thread/archived` notification."""

    pass


class ThreadUnarchivedNotification(ThreadIdNotification):
    """Params of the `thread/unarchived` notification."""

    pass


class ThreadClosedNotification(ThreadIdNotification):
    """Params of the `thread/closed` notification."""

    pass


class ThreadGoalClearedNotification(ThreadIdNotification):
    """Params of the `thread/goal/cleared` notification."""

    pass


class ThreadDeletedNotification(ThreadIdNotification):
    """Params of the `thread/deleted` notification."""

    pass


class ThreadRealtimeErrorNotification(WireModel):
    """Params of the `thread/realtime/error` notification (experimental)."""

    thread_id: str
    message: str


class ThreadRealtimeClosedNotification(WireModel):
    """Params of the `thread/realtime/closed` notification (experimental)."""

    thread_id: str
    reason: str | None = None


class ThreadGoalUpdatedNotification(WireModel):
    """Params of the `thread/goal/updated` notification."""

    thread_id: ThreadId
    turn_id: TurnId | None = None
    goal: ThreadGoal


class ThreadSectionChangedNotification(WireModel):
    """Params of the `thread/section/changed` notification."""

    thread_id: ThreadId
    section_id: str | None = None


class ThreadSearchPartialNotification(WireModel):
    """One batch of thread/search/stream matches, tagged with the id of the request that asked (0.171)."""

    request_id: RequestId | None
    data: list[JsonObj]


class ThreadNameUpdatedNotification(WireModel):
    """Params of the `thread/name/updated` notification."""

    thread_id: ThreadId
    thread_name: str | None = None


class ThreadAttachmentUpdatedNotification(WireModel):
    """Params of the `thread/attachment/updated` notification."""

    thread_id: ThreadId
    attachment_type: str
    identity_key: str
    attachment_id: str
    operation: Literal["created", "deleted"]


class ThreadRevertedNotification(WireModel):
    """Params of the `thread/reverted` notification."""

    thread_id: ThreadId


class ThreadQueueChangedNotification(WireModel):
    """Params of the `thread/queue/changed` notification."""

    thread_id: ThreadId


class ThreadSettingsUpdatedNotification(WireModel):
    """Params of the `thread/settings/updated` notification."""

    thread_id: ThreadId
    thread_settings: ThreadSettings


class ThreadTokenUsageUpdatedNotification(WireModel):
    """Params of the `thread/tokenUsage/updated` notification."""

    thread_id: ThreadId
    turn_id: TurnId
    token_usage: ThreadTokenUsage


class TurnStartedNotification(WireModel):
    """Params of the `turn/started` notification."""

    thread_id: ThreadId
    turn: Turn


class TurnCompletedNotification(WireModel):
    """Params of the `turn/completed` notification."""

    thread_id: ThreadId
    turn: Turn


class TurnDiffUpdatedNotification(WireModel):
    """Params of the `turn/diff/updated` notification."""

    thread_id: ThreadId
    turn_id: TurnId
    diff: str


class ContextCompactedNotification(WireModel):
    """Params of the `thread/compacted` notification."""

    thread_id: ThreadId
    turn_id: TurnId


class ItemStartedNotification(WireModel):
    """Params of the `item/started` notification."""

    item: ThreadItem
    thread_id: ThreadId
    turn_id: TurnId
    started_at_ms: int


class ItemCompletedNotification(WireModel):
    """Params of the `item/completed` notification."""

    item: ThreadItem
    thread_id: ThreadId
    turn_id: TurnId
    content_token_count: int | None = None
    completed_at_ms: int


class ItemDeltaNotification(WireModel):
    """Shape shared by the plain text deltas (agent message, command output, file change output)."""

    thread_id: ThreadId
    turn_id: TurnId
    item_id: ItemId
    delta: str


class AgentMessageDeltaNotification(ItemDeltaNotification):
    """Params of the `item/agentMessage/delta` notification."""

    pass


class CommandExecutionOutputDeltaNotification(ItemDeltaNotification):
    """Params of the `item/commandExecution/outputDelta` notification."""

    pass


class FileChangeOutputDeltaNotification(ItemDeltaNotification):
    """Params of the `item/fileChange/outputDelta` notification."""

    pass


class ReasoningSummaryTextDeltaNotification(WireModel):
    """Params of the `item/reasoning/summaryTextDelta` notification."""

    thread_id: ThreadId
    turn_id: TurnId
    item_id: ItemId
    delta: str
    summary_index: int


class ReasoningSummaryPartAddedNotification(WireModel):
    """Params of the `item/reasoning/summaryPartAdded` notification."""

    thread_id: ThreadId
    turn_id: TurnId
    item_id: ItemId
    summary_index: int


class ReasoningTextDeltaNotification(WireModel):
    """Params of the `item/reasoning/textDelta` notification."""

    thread_id: ThreadId
    turn_id: TurnId
    item_id: ItemId
    delta: str
    content_index: int


class ServerRequestResolvedNotification(WireModel):
    """Params of the `serverRequest/resolved` notification."""

    thread_id: ThreadId
    request_id: RequestId


class AccountRateLimitsUpdatedNotification(WireModel):
    """Params of the `account/rateLimits/updated` notification."""

    rate_limits: RateLimitSnapshot


class WarningNotification(WireModel):
    """Params of the `warning` notification."""

    thread_id: ThreadId | None = None
    message: str


class ConfigWarningNotification(OmittingWireModel):
    """Params of the `configWarning` notification."""

    summary: str
    details: str | None = None
    path: Annotated[str | None, OMIT_IF_NONE] = None
    range: Annotated[TextRange | None, OMIT_IF_NONE] = None


class McpServerStatusUpdatedNotification(WireModel):
    """Params of the `mcpServer/startupStatus/updated` notification."""

    thread_id: ThreadId | None = None
    name: str
    status: Literal["starting", "ready", "failed", "cancelled"]
    error: str | None = None
    failure_reason: Literal["reauthenticationRequired"] | None = None  # pycodex never needs reauthentication


class DeprecationNoticeNotification(WireModel):
    """Params of the `deprecationNotice` notification."""

    summary: str
    details: str | None = None


class FuzzyFileSearchSessionUpdatedNotification(WireModel):
    """Params of the `fuzzyFileSearch/sessionUpdated` notification."""

    session_id: str
    query: str
    files: list[JsonObj]


class FuzzyFileSearchSessionCompletedNotification(WireModel):
    """Params of the `fuzzyFileSearch/sessionCompleted` notification."""

    session_id: str


class RemoteControlStatusChangedNotification(WireModel):
    """Params of the `remoteControl/status/changed` notification."""

    status: RemoteControlConnectionStatus
    server_name: str
    installation_id: str
    environment_id: str | None = None


NOTIFICATIONS: MappingProxyType[str, type[WireModel]] = MappingProxyType(
    {
        "error": ErrorNotification,
        "thread/started": ThreadStartedNotification,
        "thread/status/changed": ThreadStatusChangedNotification,
        "thread/readState/changed": ThreadReadStateChangedNotification,
        "thread/archived": ThreadArchivedNotification,
        "thread/unarchived": ThreadUnarchivedNotification,
        "thread/closed": ThreadClosedNotification,
        "thread/name/updated": ThreadNameUpdatedNotification,
        "thread/goal/cleared": ThreadGoalClearedNotification,
        "thread/goal/updated": ThreadGoalUpdatedNotification,
        "thread/deleted": ThreadDeletedNotification,
        "thread/realtime/error": ThreadRealtimeErrorNotification,
        "thread/realtime/closed": ThreadRealtimeClosedNotification,
        "thread/section/changed": ThreadSectionChangedNotification,
        "thread/search/partial": ThreadSearchPartialNotification,
        "thread/settings/updated": ThreadSettingsUpdatedNotification,
        "thread/attachment/updated": ThreadAttachmentUpdatedNotification,
        "thread/queue/changed": ThreadQueueChangedNotification,
        "thread/reverted": ThreadRevertedNotification,
        "thread/tokenUsage/updated": ThreadTokenUsageUpdatedNotification,
        "thread/compacted": ContextCompactedNotification,
        "turn/started": TurnStartedNotification,
        "turn/completed": TurnCompletedNotification,
        "turn/diff/updated": TurnDiffUpdatedNotification,
        "item/started": ItemStartedNotification,
        "item/completed": ItemCompletedNotification,
        "item/agentMessage/delta": AgentMessageDeltaNotification,
        "item/commandExecution/outputDelta": CommandExecutionOutputDeltaNotification,
        "item/fileChange/outputDelta": FileChangeOutputDeltaNotification,
        "item/reasoning/summaryTextDelta": ReasoningSummaryTextDeltaNotification,
        "item/reasoning/summaryPartAdded": ReasoningSummaryPartAddedNotification,
        "item/reasoning/textDelta": ReasoningTextDeltaNotification,
        "serverRequest/resolved": ServerRequestResolvedNotification,
        "account/rateLimits/updated": AccountRateLimitsUpdatedNotification,
        "warning": WarningNotification,
        "configWarning": ConfigWarningNotification,
        "mcpServer/startupStatus/updated": McpServerStatusUpdatedNotification,
        "deprecationNotice": DeprecationNoticeNotification,
        "remoteControl/status/changed": RemoteControlStatusChangedNotification,
        "fuzzyFileSearch/sessionUpdated": FuzzyFileSearchSessionUpdatedNotification,
        "fuzzyFileSearch/sessionCompleted": FuzzyFileSearchSessionCompletedNotification,
    }
)

# Sent only to connections that negotiated `experimentalApi` (both observed on Codex 0.169.0: a
# non-experimental client got neither during the same turn).
EXPERIMENTAL_NOTIFICATIONS: frozenset[str] = frozenset(
    {"thread/readState/changed", "thread/settings/updated", "thread/realtime/error", "thread/realtime/closed"}
)


def notification_envelope(method: str, params: BaseModel, emitted_at_ms: int) -> JsonObj:
    """The full notification line Codex writes: method, params, then the top-level `emittedAtMs`."""
    return {"method": method, "params": to_wire(params), "emittedAtMs": emitted_at_ms}


def parse_notification(method: str, params: object) -> WireModel:
    """Validate notification params against the model registered for `method` (KeyError if unknown)."""
    return NOTIFICATIONS[method].model_validate(params)
