"""Sans-IO mapping of one app-server turn's notifications to events (the fork flow, §5.6 and §8.2).

Real 0.169 shapes: ``item/agentMessage/delta {threadId, turnId, itemId, delta}``, ``item/started`` and
``item/completed {item:{type, id, ...}, threadId, turnId}``, ``turn/started``, ``turn/completed
{threadId, turn:{id, status, error}}``, ``error {error:{message}}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_api.bounds import bound_event
from agent_api.classify import tool_facet
from agent_api.values import Event, EventKind
from pycodex.item_views import ITEM_VIEWS
from pycodex.json_types import JsonObj

__all__ = ["TurnMapper"]

_TEXT_DELTAS = ("item/agentMessage/delta", "item/reasoning/summaryTextDelta", "item/reasoning/textDelta")


@dataclass
class TurnMapper:
    """Feed notifications for ``thread_id``; ``done`` turns true at that thread's ``turn/completed``."""

    agent_kind: str
    thread_id: str
    done: bool = False
    failed: bool = False
    final_text: str | None = None
    _streamed: set[str] = field(default_factory=set)

    def _event(self, kind: EventKind, channel: str | None, *, text: str | None = None,
               message: str | None = None, data: JsonObj | None = None) -> Event:
        return Event(agent_kind=self.agent_kind, kind=kind, channel=channel, text=text, message=message, data=data)

    def feed(self, method: str, params: object) -> list[Event]:
        """The events for one notification of the turn; notifications of other threads give none."""
        if not isinstance(params, dict):
            return []
        thread = params.get("threadId")
        if thread is not None and thread != self.thread_id:
            return []
        events = self._map(method, params)
        return [bounded for event in events for bounded in bound_event(event)]

    def _map(self, method: str, params: JsonObj) -> list[Event]:
        if method in _TEXT_DELTAS:
            delta = params.get("delta")
            if isinstance(delta, str) and delta:
                if method == "item/agentMessage/delta" and isinstance(params.get("itemId"), str):
                    self._streamed.add(params["itemId"])
                return [self._event(EventKind.TEXT_OUTPUT, "assistant", text=delta)]
            return []
        if method == "turn/started":
            return [self._event(EventKind.STATUS, "status")]
        if method == "turn/completed":
            self.done = True
            turn = params.get("turn")
            if isinstance(turn, dict) and turn.get("status") == "failed":
                self.failed = True
                return [self._event(EventKind.STATUS, "status", message="turn failed")]
            return [self._event(EventKind.STATUS, "status")]
        if method == "error":
            error = params.get("error")
            message = error.get("message") if isinstance(error, dict) else None
            return [self._event(EventKind.ERROR, "error",
                                message=message if isinstance(message, str) and message else "turn error")]
        if method in ("item/started", "item/completed"):
            item = params.get("item")
            return self._item(method, item) if isinstance(item, dict) else []
        return []

    def _item(self, method: str, item: JsonObj) -> list[Event]:
        view = ITEM_VIEWS.view_of(item.get("type"))
        if view.tool_kind is not None:
            if method == "item/started":
                facet = tool_facet(item.get("id"), view.tool_kind, "start", "running", None, self.thread_id)
                return [self._event(EventKind.TOOL_CALL, "tool", data=facet)]
            failed = item.get("status") in ("failed", "declined")
            exit_code = item.get("exitCode")
            facet = tool_facet(item.get("id"), view.tool_kind, "fail" if failed else "complete",
                               "failed" if failed else "completed", exit_code, self.thread_id)
            return [self._event(EventKind.TOOL_RESULT, "tool", data=facet)]
        if view.answer and method == "item/completed":
            text = item.get("text")
            if isinstance(text, str) and text:
                self.final_text = text
                if item.get("id") not in self._streamed:
                    return [self._event(EventKind.TEXT_OUTPUT, "assistant", text=text)]
        return []
