"""Map one model response's events to thread items and notifications (no IO).

``SampleMapper.feed(event)`` returns actions for the turn runner to carry out in order: notifications
to emit, completed items to store and then announce, history items for the model, tool calls to run,
and the response's usage.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from app_server.model import events as ev
from app_server.protocol import notices
from app_server.protocol.notices import Notice
from app_server.threads import items as it
from app_server.threads.web_search import WEB_SEARCH_CALL, web_search_item
from pycodex.json_types import JsonObj

__all__ = ["Completed", "Emit", "HistoryAppend", "ItemDone", "SampleMapper", "ToolCall"]


@dataclass(frozen=True, slots=True)
class Emit:
    """Send ``notice`` to the thread's subscribers."""

    notice: Notice


@dataclass(frozen=True, slots=True)
class ItemDone:
    """A completed item: store it durably, then emit ``item/completed``."""

    item: JsonObj


@dataclass(frozen=True, slots=True)
class HistoryAppend:
    """Add ``item`` to the model history (no notification)."""

    item: JsonObj


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A function (or custom) tool call of the model, to run before the next request."""

    call_id: str
    name: str
    arguments: str
    namespace: str | None = None
    custom: bool = False
    #: A client-executed ``tool_search_call`` (``arguments``: its arguments object as JSON text).
    tool_search: bool = False


@dataclass(frozen=True, slots=True)
class Completed:
    """The response has completed; ``usage`` is its token usage when the provider sent it."""

    usage: ev.Usage | None


Action = Emit | ItemDone | HistoryAppend | ToolCall | Completed


@dataclass
class _Open:
    item: JsonObj
    parts: list[str] = field(default_factory=list)


class SampleMapper:
    """Turns one response's events into the runner's actions (notices, items, history, tool calls)."""

    def __init__(self, thread_id: str, turn_id: str) -> None:
        self.thread_id = thread_id
        self.turn_id = turn_id
        self._open: dict[str, _Open] = {}
        self._anon = 0
        #: True once the response produced anything visible (a steer then no longer restarts it).
        self.produced_output = False

    def _key(self, item_id: str | None) -> str:
        if item_id:
            return item_id
        self._anon += 1
        return f"msg_{self.turn_id}_{self._anon}"

    def _start(self, item: JsonObj) -> list[Action]:
        self._open[item["id"]] = _Open(item)
        return [Emit(notices.item_started(item, self.thread_id, self.turn_id))]

    def _finish(self, key: str, **updates: object) -> list[Action]:
        opened = self._open.pop(key)
        done = {**opened.item, **updates, "completedAtMs": it.now_ms()}
        return [ItemDone(done)]

    def reset(self) -> None:
        """The response restarted after a retry: forget half-built items."""
        self._open.clear()

    def feed(self, event: ev.ResponseEvent) -> list[Action]:
        """The actions one response event leads to, in order (none for events with nothing to show)."""
        if isinstance(event, ev.OutputTextDelta):
            return self._text_delta(event)
        if isinstance(event, ev.OutputItemAdded):
            return self._added(event.item)
        if isinstance(event, ev.OutputItemDone):
            return self._done(event.item)
        if isinstance(event, ev.ReasoningSummaryPartAdded):
            return self._summary_part(event)
        if isinstance(event, ev.ReasoningSummaryTextDelta):
            return self._summary_delta(event)
        if isinstance(event, ev.ResponseCompleted):
            return [Completed(event.usage)]
        if isinstance(event, ev.ResponseRestarted):
            self.reset()
        return []

    def _added(self, item: ev.OutputItem) -> list[Action]:
        if isinstance(item, ev.MessageItem) and item.role == "assistant":
            key = self._key(item.id)
            self.produced_output = True
            return self._start(it.agent_message(key, "", phase=item.phase, started_at_ms=it.now_ms()))
        if isinstance(item, ev.ReasoningItem):
            key = self._key(item.id)
            return self._start(it.reasoning(key, started_at_ms=it.now_ms()))
        if isinstance(item, ev.OtherItem) and item.type == WEB_SEARCH_CALL:
            self.produced_output = True
            return self._start(web_search_item(self._key(item.id), None, started_at_ms=it.now_ms()))
        return []

    def _text_delta(self, event: ev.OutputTextDelta) -> list[Action]:
        key = event.item_id or ""
        actions: list[Action] = []
        opened = self._open.get(key)
        if opened is None:
            key = self._key(event.item_id)
            actions += self._start(it.agent_message(key, "", phase=None, started_at_ms=it.now_ms()))
            opened = self._open[key]
        self.produced_output = True
        opened.parts.append(event.delta)
        actions.append(
            Emit(notices.agent_message_delta(self.thread_id, self.turn_id, opened.item["id"], event.delta))
        )
        return actions

    def _summary_slot(self, item_id: str | None, index: int) -> tuple[_Open, list[str]] | None:
        """The open reasoning item and its summary list, padded so ``index`` exists."""
        opened = self._open.get(item_id or "")
        if opened is None:
            return None
        summary: list[str] = opened.item["summary"]
        while len(summary) <= index:
            summary.append("")
        return opened, summary

    def _summary_part(self, event: ev.ReasoningSummaryPartAdded) -> list[Action]:
        slot = self._summary_slot(event.item_id, event.summary_index)
        if slot is None:
            return []
        opened, _ = slot
        return [
            Emit(notices.reasoning_summary_part_added(self.thread_id, self.turn_id, opened.item["id"],
                                                      event.summary_index))
        ]

    def _summary_delta(self, event: ev.ReasoningSummaryTextDelta) -> list[Action]:
        slot = self._summary_slot(event.item_id, event.summary_index)
        if slot is None:
            return []
        opened, summary = slot
        summary[event.summary_index] += event.delta
        return [
            Emit(notices.reasoning_summary_text_delta(self.thread_id, self.turn_id, opened.item["id"], event.delta,
                                                      event.summary_index))
        ]

    def _done(self, item: ev.OutputItem) -> list[Action]:
        actions: list[Action] = []
        if isinstance(item, ev.MessageItem):
            actions.append(HistoryAppend(item.raw))
            if item.role != "assistant":
                return actions
            self.produced_output = True
            key = item.id or ""
            if key not in self._open:
                key = self._key(item.id)
                actions += self._start(it.agent_message(key, item.text, phase=item.phase,
                                                        started_at_ms=it.now_ms()))
            text = item.text or "".join(self._open[key].parts)
            actions += self._finish(key, text=text, phase=item.phase)
            return actions
        if isinstance(item, ev.ReasoningItem):
            actions.append(HistoryAppend(item.raw))
            key = item.id or ""
            if key not in self._open:
                key = self._key(item.id)
                actions += self._start(it.reasoning(key, started_at_ms=it.now_ms()))
            summary = list(item.summary) if item.summary else self._open[key].item["summary"]
            actions += self._finish(key, summary=summary, content=list(item.content))
            return actions
        if isinstance(item, ev.FunctionCallItem):
            self.produced_output = True
            actions.append(HistoryAppend(item.raw))
            actions.append(ToolCall(item.call_id, item.name, item.arguments, item.namespace))
            return actions
        if isinstance(item, ev.CustomToolCallItem):
            self.produced_output = True
            actions.append(HistoryAppend(item.raw))
            actions.append(ToolCall(item.call_id, item.name, item.input, custom=True))
            return actions
        if isinstance(item, ev.OtherItem):
            actions.append(HistoryAppend(item.raw))
            if item.type == WEB_SEARCH_CALL:
                actions += self._web_search_done(item)
            elif item.type == "tool_search_call" and item.raw.get("execution") == "client":
                self.produced_output = True
                actions.append(ToolCall(str(item.raw.get("call_id") or ""), "tool_search",
                                        json.dumps(item.raw.get("arguments")), tool_search=True))
        return actions

    def _web_search_done(self, item: ev.OtherItem) -> list[Action]:
        """Complete the ``webSearch`` item of a finished hosted search (started here if never announced)."""
        self.produced_output = True
        key = item.id or ""
        actions: list[Action] = []
        if key not in self._open:
            key = self._key(item.id)
            actions += self._start(web_search_item(key, None, started_at_ms=it.now_ms()))
        done = web_search_item(key, item.raw, started_at_ms=self._open[key].item["startedAtMs"])
        return actions + self._finish(key, query=done["query"], action=done["action"])
