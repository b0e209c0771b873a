"""Map app-server v2 notifications to the ``codex exec --json`` event stream (sans-IO).

Notifications go in (``feed(method, params)``), exec events come out as plain dicts, one JSONL line
each. The shapes follow Codex 0.169's stream: only ``thread.started`` carries an id; items are
snake_case with per-process ids ``item_0``, ``item_1``...; agent messages and reasoning appear only
when completed; ``turn.completed`` carries the thread's total token usage; a failed turn ends with
``turn.failed`` whose message is the turn's error.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pycodex.item_views import ITEM_VIEWS, camel_to_snake
from pycodex.json_types import JsonObj

__all__ = ["ExecEventMapper", "ExecOutcome", "camel_to_snake"]


_USAGE_FIELDS = (
    ("input_tokens", "inputTokens"),
    ("cached_input_tokens", "cachedInputTokens"),
    ("cache_write_input_tokens", "cacheWriteInputTokens"),
    ("output_tokens", "outputTokens"),
    ("reasoning_output_tokens", "reasoningOutputTokens"),
)


@dataclass
class ExecOutcome:
    """What the run amounted to, for the exit code and ``--output-last-message``."""

    last_message: str | None = None
    failed: bool = False
    error_message: str | None = None
    total_tokens: int = 0


@dataclass
class ExecEventMapper:
    """One per process: holds the item numbering, the usage seen so far and the outcome."""

    outcome: ExecOutcome = field(default_factory=ExecOutcome)
    _ids: dict[str, str] = field(default_factory=dict)
    _next: int = 0
    _usage: JsonObj = field(default_factory=lambda: {name: 0 for name, _ in _USAGE_FIELDS})
    _todo_id: str | None = None
    _todo_items: list[JsonObj] = field(default_factory=list)

    # -- helpers -----------------------------------------------------------------------------------
    def _item_id(self, server_id: str | None) -> str:
        """Codex numbers items per process; started and completed events of one item share the id (an id the
        model reuses after that item completed is a new item)."""
        if server_id is not None and server_id in self._ids:
            return self._ids[server_id]
        new = f"item_{self._next}"
        self._next += 1
        if server_id is not None:
            self._ids[server_id] = new
        return new

    def thread_started(self, thread_id: str) -> JsonObj:
        """The ``thread.started`` event, the only one that names the thread."""
        return {"type": "thread.started", "thread_id": thread_id}

    def error_item(self, message: str) -> JsonObj:
        """A non-fatal warning, shown as a completed ``error`` item (Codex does so even before turn.started)."""
        return {"type": "item.completed", "item": {"id": self._item_id(None), "type": "error", "message": message}}

    # -- the mapping -------------------------------------------------------------------------------
    def feed(self, method: str, params: JsonObj) -> list[JsonObj]:
        """The exec events for one v2 notification (none for most)."""
        if method == "turn/started":
            return [{"type": "turn.started"}]
        if method in ("item/started", "item/completed"):
            item = params.get("item")
            if not isinstance(item, dict):
                return []
            return self._item(item, completed=method == "item/completed")
        if method == "warning":
            return [self.error_item(str(params.get("message", "")))]
        if method == "error":
            return [self._error(params)]
        if method == "thread/tokenUsage/updated":
            total = (params.get("tokenUsage") or {}).get("total") or {}
            self._usage = {name: int(total.get(key) or 0) for name, key in _USAGE_FIELDS}
            self.outcome.total_tokens = int(total.get("totalTokens") or 0)
            return []
        if method == "turn/plan/updated":
            return self._plan(params)
        if method == "turn/completed":
            return self._turn_completed(params)
        return []

    def _error(self, params: JsonObj) -> JsonObj:
        error = params.get("error") or {}
        message = str(error.get("message", ""))
        details = error.get("additionalDetails")
        if params.get("willRetry"):
            # Codex: "Reconnecting... 1/2 (<cause>)"; such lines do not end the turn.
            return {"type": "error", "message": f"{message} ({details})" if details else message}
        self.outcome.error_message = message
        return {"type": "error", "message": message}

    def _item(self, item: JsonObj, *, completed: bool) -> list[JsonObj]:
        view = ITEM_VIEWS.view_of(item.get("type"))
        # Tool calls are shown while they run (item.started) as well as when they end; the rest only end.
        if view.exec_item is None or (not completed and view.tool_kind is None):
            return []
        server_id = item.get("id")
        key = str(server_id) if server_id is not None else None
        mapped = view.exec_item(item, lambda: self._item_id(key))
        if completed and key is not None:
            # The model may reuse an item id (Codex numbers each item anyway): once an item has completed,
            # its id no longer names it, and the next item with that id gets a number of its own.
            self._ids.pop(key, None)
        if mapped is None:
            return []
        if view.answer:
            self.outcome.last_message = str(mapped["text"])
        return [{"type": "item.completed" if completed else "item.started", "item": mapped}]

    def _plan(self, params: JsonObj) -> list[JsonObj]:
        self._todo_items = [
            {"text": str(step.get("step", "")), "completed": step.get("status") == "completed"}
            for step in params.get("plan") or [] if isinstance(step, dict)
        ]
        started = self._todo_id is None
        if self._todo_id is None:
            self._todo_id = self._item_id(None)
        item = {"id": self._todo_id, "type": "todo_list", "items": list(self._todo_items)}
        return [{"type": "item.started" if started else "item.updated", "item": item}]

    def _turn_completed(self, params: JsonObj) -> list[JsonObj]:
        events: list[JsonObj] = []
        if self._todo_id is not None:  # the plan's item ends with the turn
            events.append({"type": "item.completed",
                           "item": {"id": self._todo_id, "type": "todo_list", "items": list(self._todo_items)}})
            self._todo_id = None
        turn = params.get("turn") or {}
        status = turn.get("status")
        if status == "completed":
            events.append({"type": "turn.completed", "usage": dict(self._usage)})
            return events
        error = turn.get("error") or {}
        message = str(error.get("message") or self.outcome.error_message or f"turn {status}")
        self.outcome.failed = True
        self.outcome.error_message = message
        events.append({"type": "turn.failed", "error": {"message": message}})
        return events
