"""Typed constructors for every server notification pycodex sends: the one home of their names.

Each constructor returns a ``Notice`` (method + params). The params are plain dicts in the wire's key
order, because turns emit them on the hot path (every text delta) and validating a model per delta
would cost more than the write. ``tests/app_server/test_protocol_notices.py`` pins each constructor's dict to the
dump of its pydantic model in ``protocol.notifications``, so the two cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pycodex.json_types import JsonObj

__all__ = [
    "BROADCAST",
    "EXPERIMENTAL",
    "Notice",
    "NoticeMethod",
    "NoticeSink",
    "agent_message_delta",
    "command_output_delta",
    "config_warning",
    "deprecation_notice",
    "error",
    "fuzzy_session_completed",
    "fuzzy_session_updated",
    "item_completed",
    "item_started",
    "mcp_startup_status",
    "rate_limits_updated",
    "reasoning_summary_part_added",
    "reasoning_summary_text_delta",
    "send",
    "server_request_resolved",
    "thread_archived",
    "thread_deleted",
    "thread_goal_cleared",
    "thread_goal_updated",
    "thread_name_updated",
    "thread_read_state_changed",
    "thread_realtime_closed",
    "thread_realtime_error",
    "thread_search_partial",
    "thread_section_changed",
    "thread_started",
    "thread_status_changed",
    "thread_unarchived",
    "token_usage_updated",
    "turn_completed",
    "turn_diff_updated",
    "turn_started",
    "warning",
]


NoticeMethod = Literal[
    "error",
    "thread/started",
    "thread/status/changed",
    "thread/readState/changed",
    "thread/archived",
    "thread/unarchived",
    "thread/name/updated",
    "thread/deleted",
    "thread/goal/updated",
    "thread/goal/cleared",
    "thread/attachment/updated",
    "thread/settings/updated",
    "thread/queue/changed",
    "thread/reverted",
    "thread/section/changed",
    "thread/search/partial",
    "thread/realtime/error",
    "thread/realtime/closed",
    "thread/tokenUsage/updated",
    "turn/started",
    "turn/completed",
    "turn/diff/updated",
    "item/started",
    "item/completed",
    "item/agentMessage/delta",
    "item/commandExecution/outputDelta",
    "item/reasoning/summaryPartAdded",
    "item/reasoning/summaryTextDelta",
    "serverRequest/resolved",
    "account/rateLimits/updated",
    "warning",
    "configWarning",
    "mcpServer/startupStatus/updated",
    "deprecationNotice",
    "fuzzyFileSearch/sessionUpdated",
    "fuzzyFileSearch/sessionCompleted",
]


#: Sent only to connections that negotiated ``experimentalApi`` (Codex 0.169.0 withholds it from others).
EXPERIMENTAL: frozenset[NoticeMethod] = frozenset({
    "thread/readState/changed", "thread/realtime/error", "thread/realtime/closed",
})
#: A thread's lifecycle and metadata changes, which Codex 0.169.0 sends to every initialized connection,
#: subscribed to the thread or not (turn, item, usage and settings notifications go to subscribers only).
BROADCAST: frozenset[NoticeMethod] = frozenset({
    "thread/started", "thread/status/changed", "thread/name/updated", "thread/goal/updated",
    "thread/goal/cleared", "thread/archived", "thread/unarchived", "thread/deleted", "thread/section/changed",
    "thread/attachment/updated",
})


@dataclass(frozen=True, slots=True)
class Notice:
    """One server notification, ready for ``Session.notify(notice.method, notice.params)``."""

    method: NoticeMethod
    params: JsonObj


class NoticeSink(Protocol):
    """Anything that sends notifications to one client (``app_server.connection.Session``)."""

    async def notify(self, method: str, params: Any) -> None:
        """Send one notification to the client."""


async def send(sink: NoticeSink, notice: Notice) -> None:
    """Send ``notice`` to one client (a thread's subscribers get it through ``ThreadRuntime.emit``)."""
    await sink.notify(notice.method, notice.params)


# -- threads ---------------------------------------------------------------------------------------------
def thread_started(thread: JsonObj) -> Notice:
    """The `thread/started` notification."""
    return Notice("thread/started", {"thread": thread})


def thread_status_changed(thread_id: str, status: JsonObj) -> Notice:
    """The `thread/status/changed` notification."""
    return Notice("thread/status/changed", {"threadId": thread_id, "status": status})


def thread_read_state_changed(thread_id: str, read_state: JsonObj) -> Notice:
    """The `thread/readState/changed` notification."""
    return Notice("thread/readState/changed", {"threadId": thread_id, "readState": read_state})


def thread_archived(thread_id: str) -> Notice:
    """The `thread/archived` notification."""
    return Notice("thread/archived", {"threadId": thread_id})


def thread_unarchived(thread_id: str) -> Notice:
    """The `thread/unarchived` notification."""
    return Notice("thread/unarchived", {"threadId": thread_id})


def thread_name_updated(thread_id: str, name: str | None) -> Notice:
    """The `thread/name/updated` notification."""
    return Notice("thread/name/updated", {"threadId": thread_id, "threadName": name})


def thread_deleted(thread_id: str) -> Notice:
    """The `thread/deleted` notification."""
    return Notice("thread/deleted", {"threadId": thread_id})


def thread_goal_updated(thread_id: str, turn_id: str | None, goal: JsonObj) -> Notice:
    """The `thread/goal/updated` notification."""
    return Notice("thread/goal/updated", {"threadId": thread_id, "turnId": turn_id, "goal": goal})


def thread_attachment_updated(thread_id: str, kind: str, key: str, attachment_id: str, operation: str) -> Notice:
    """The `thread/attachment/updated` notification."""
    return Notice("thread/attachment/updated", {"threadId": thread_id, "attachmentType": kind, "identityKey": key,
                                                "attachmentId": attachment_id, "operation": operation})


def thread_settings_updated(thread_id: str, settings: JsonObj) -> Notice:
    """The `thread/settings/updated` notification."""
    return Notice("thread/settings/updated", {"threadId": thread_id, "threadSettings": settings})


def thread_queue_changed(thread_id: str) -> Notice:
    """The `thread/queue/changed` notification."""
    return Notice("thread/queue/changed", {"threadId": thread_id})


def thread_reverted(thread_id: str) -> Notice:
    """The `thread/reverted` notification."""
    return Notice("thread/reverted", {"threadId": thread_id})


def thread_goal_cleared(thread_id: str) -> Notice:
    """The `thread/goal/cleared` notification."""
    return Notice("thread/goal/cleared", {"threadId": thread_id})


def thread_section_changed(thread_id: str, section_id: str | None) -> Notice:
    """The `thread/section/changed` notification."""
    return Notice("thread/section/changed", {"threadId": thread_id, "sectionId": section_id})


def thread_search_partial(request_id: int | str | None, data: list[JsonObj]) -> Notice:
    """The `thread/search/partial` notification."""
    return Notice("thread/search/partial", {"requestId": request_id, "data": data})


def thread_realtime_error(thread_id: str, message: str) -> Notice:
    """The `thread/realtime/error` notification (experimental): the realtime session could not go on."""
    return Notice("thread/realtime/error", {"threadId": thread_id, "message": message})


def thread_realtime_closed(thread_id: str, reason: str | None) -> Notice:
    """The `thread/realtime/closed` notification (experimental): the realtime transport closed."""
    return Notice("thread/realtime/closed", {"threadId": thread_id, "reason": reason})


def token_usage_updated(thread_id: str, turn_id: str, usage: JsonObj) -> Notice:
    """The `thread/tokenUsage/updated` notification."""
    return Notice("thread/tokenUsage/updated", {"threadId": thread_id, "turnId": turn_id, "tokenUsage": usage})


# -- turns -----------------------------------------------------------------------------------------------
def turn_started(thread_id: str, turn: JsonObj) -> Notice:
    """The `turn/started` notification."""
    return Notice("turn/started", {"threadId": thread_id, "turn": turn})


def turn_completed(thread_id: str, turn: JsonObj) -> Notice:
    """The `turn/completed` notification."""
    return Notice("turn/completed", {"threadId": thread_id, "turn": turn})


def turn_diff_updated(thread_id: str, turn_id: str, diff: str) -> Notice:
    """The `turn/diff/updated` notification: the turn's aggregated unified diff so far."""
    return Notice("turn/diff/updated", {"threadId": thread_id, "turnId": turn_id, "diff": diff})


def error(error: JsonObj | None, *, will_retry: bool, thread_id: str, turn_id: str) -> Notice:
    """The `error` notification."""
    return Notice("error", {"error": error, "willRetry": will_retry, "threadId": thread_id, "turnId": turn_id})


# -- items -----------------------------------------------------------------------------------------------
def item_started(item: JsonObj, thread_id: str, turn_id: str) -> Notice:
    """The `item/started` notification."""
    return Notice("item/started", {"item": item, "threadId": thread_id, "turnId": turn_id,
                                   "startedAtMs": item["startedAtMs"]})


def item_completed(item: JsonObj, thread_id: str, turn_id: str) -> Notice:
    """The `item/completed` notification."""
    return Notice("item/completed", {"item": item, "threadId": thread_id, "turnId": turn_id,
                                     "contentTokenCount": None, "completedAtMs": item["completedAtMs"]})


def agent_message_delta(thread_id: str, turn_id: str, item_id: str, delta: str) -> Notice:
    """The `item/agentMessage/delta` notification."""
    return Notice("item/agentMessage/delta",
                  {"threadId": thread_id, "turnId": turn_id, "itemId": item_id, "delta": delta})


def command_output_delta(thread_id: str, turn_id: str, item_id: str, delta: str) -> Notice:
    """The `item/commandExecution/outputDelta` notification."""
    return Notice("item/commandExecution/outputDelta",
                  {"threadId": thread_id, "turnId": turn_id, "itemId": item_id, "delta": delta})


def reasoning_summary_part_added(thread_id: str, turn_id: str, item_id: str, summary_index: int) -> Notice:
    """The `item/reasoning/summaryPartAdded` notification."""
    return Notice("item/reasoning/summaryPartAdded",
                  {"threadId": thread_id, "turnId": turn_id, "itemId": item_id, "summaryIndex": summary_index})


def reasoning_summary_text_delta(
    thread_id: str, turn_id: str, item_id: str, delta: str, summary_index: int
) -> Notice:
    """The `item/reasoning/summaryTextDelta` notification."""
    return Notice("item/reasoning/summaryTextDelta",
                  {"threadId": thread_id, "turnId": turn_id, "itemId": item_id, "delta": delta,
                   "summaryIndex": summary_index})


# -- requests, account, config ---------------------------------------------------------------------------
def server_request_resolved(thread_id: str, request_id: int | str) -> Notice:
    """The `serverRequest/resolved` notification."""
    return Notice("serverRequest/resolved", {"threadId": thread_id, "requestId": request_id})


def rate_limits_updated() -> Notice:
    """The snapshot pycodex reports after each response: no provider tells it real limits."""
    return Notice("account/rateLimits/updated", {"rateLimits": {
        "limitId": "codex", "limitName": None, "normalModelSlug": None, "primary": None, "secondary": None,
        "credits": None, "individualLimit": None, "spendControlReached": None, "planType": None,
        "rateLimitReachedType": None}})


def warning(thread_id: str | None, message: str) -> Notice:
    """The `warning` notification."""
    return Notice("warning", {"threadId": thread_id, "message": message})


def config_warning(params: JsonObj) -> Notice:
    """The `configWarning` notification."""
    return Notice("configWarning", params)


# -- MCP -------------------------------------------------------------------------------------------------
def mcp_startup_status(thread_id: str | None, name: str, status: str, error: str | None) -> Notice:
    """A thread's MCP server changed state (starting, ready, failed, cancelled)."""
    return Notice("mcpServer/startupStatus/updated",
                  {"threadId": thread_id, "name": name, "status": status, "error": error, "failureReason": None})


def deprecation_notice(summary: str, details: str | None = None) -> Notice:
    """The `deprecationNotice` notification."""
    return Notice("deprecationNotice", {"summary": summary, "details": details})


# -- fuzzy file search sessions --------------------------------------------------------------------------
def fuzzy_session_updated(session_id: str, query: str, files: list[JsonObj]) -> Notice:
    """The `fuzzyFileSearch/sessionUpdated` notification."""
    return Notice("fuzzyFileSearch/sessionUpdated", {"sessionId": session_id, "query": query, "files": files})


def fuzzy_session_completed(session_id: str) -> Notice:
    """The `fuzzyFileSearch/sessionCompleted` notification."""
    return Notice("fuzzyFileSearch/sessionCompleted", {"sessionId": session_id})
