"""Sans-IO classification of an agent's ``exec --json`` stdout: lines in, events out (§5.2-§5.3, §8).

It understands both the real nested item schema of Codex 0.169 (``{"type":"item.completed","item":{...}}``)
and the flat legacy one (top-level ``item_type``). It records what a completion needs to be classified:
the session id, a pinned backend error, and (in resume flows) the last swallowed transport error.
Nothing here copies raw stdout or stderr into an event or error, except the ``message`` of an upstream
``error`` line outside resume flows, which the contract forwards verbatim.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TypedDict, Unpack

from agent_api.bounds import bound_event
from agent_api.pinned import (
    ADD_DIRS_RUNTIME_REJECTION,
    EXTERNAL_SANDBOX_FLAG_UNSUPPORTED,
    EXTERNAL_SANDBOX_WARNING,
    MODEL_RUNTIME_REJECTION,
    is_not_found_signal,
    selection_failure_message,
)
from agent_api.values import Event, EventKind, SessionSelector, handle_facet
from pycodex.json_types import JsonObj, JsonValue

__all__ = ["ExecClassifier", "ExecOutcome", "FlowFlags", "describe_exit", "tool_facet"]

MAX_SESSION_ID_BYTES = 1024
TOOL_ITEM_TYPES = frozenset({"command_execution", "file_change", "mcp_tool_call", "web_search"})
TEXT_ITEM_TYPES = frozenset({"agent_message", "reasoning"})
_BYPASS_FLAG = "dangerously-bypass-approvals-and-sandbox"
_UNKNOWN_FLAG_WORDS = ("unknown", "unrecognized", "unexpected", "found argument", "invalid")


class _EventFields(TypedDict, total=False):
    """The payload fields of an :class:`Event` a classifier may set."""

    text: str | None
    message: str | None
    data: JsonValue


@dataclass(frozen=True)
class FlowFlags:
    """The parts of a run's policy that change how lines and the exit are classified."""

    resume: SessionSelector | None = None
    has_add_dirs: bool = False
    has_model: bool = False
    external_sandbox: bool = False


@dataclass(frozen=True)
class ExecOutcome:
    """What the exit means: ``error`` is the completion's Backend message (None: success or a bare
    non-zero exit); ``tail`` is the terminal event, if any."""

    error: str | None
    tail: Event | None
    exit_code: int


def describe_exit(exit_code: int) -> str:
    """A stable rendering of a return code: ``exit_code=N`` or ``signal=N``."""
    return f"signal={-exit_code}" if exit_code < 0 else f"exit_code={exit_code}"


def tool_facet(
    item_id: object, item_type: str, phase: str, status: str, exit_code: object, thread_id: str | None
) -> JsonObj:
    """The structured-tools facet: identifiers and phase only, never tool input or output."""
    return {
        "schema": "agent_api.tools.structured.v1",
        "tool": {
            "backend_item_id": item_id if isinstance(item_id, str) else None,
            "thread_id": thread_id,
            "turn_id": None,
            "kind": item_type,
            "phase": phase,
            "status": status,
            "exit_code": exit_code if isinstance(exit_code, int) and not isinstance(exit_code, bool) else None,
            "tool_name": None,
            "tool_use_id": None,
        },
    }


@dataclass
class ExecClassifier:
    """Feed stdout lines with ``feed``; call ``finish`` once with the exit code and captured stderr."""

    agent_kind: str
    flags: FlowFlags = field(default_factory=FlowFlags)
    session_id: str | None = None
    saw_stream_error: bool = False
    backend_error: str | None = None
    last_transport_message: str | None = None
    last_transport_code: str | None = None
    final_message: str | None = None
    _facet_pending: bool = False

    # -- lines ---------------------------------------------------------------------------------
    def preamble(self) -> list[Event]:
        """Events that come before any line: the external-sandbox warning, when it applies."""
        if self.flags.external_sandbox:
            return [self._event(EventKind.STATUS, "status", message=EXTERNAL_SANDBOX_WARNING)]
        return []

    def feed(self, line: bytes | str) -> list[Event]:
        """Classify one stdout line (without its newline) into zero or more bounded events."""
        raw = line.encode() if isinstance(line, str) else line
        if not raw.strip():
            return []
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError):
            return self._stream_error(f"{self.agent_kind} stream parse error (redacted): invalid JSON", len(raw))
        if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
            return self._stream_error(
                f"{self.agent_kind} stream normalize error (redacted): not a typed event", len(raw)
            )
        events = self._map(obj)
        events = self._attach_handle(obj, events)
        return [bounded for event in events for bounded in bound_event(event)]

    def _stream_error(self, message: str, size: int) -> list[Event]:
        self.saw_stream_error = True
        return [self._event(EventKind.ERROR, "error", message=f"{message} (line_bytes={size})")]

    def _event(self, kind: EventKind, channel: str | None, **fields: Unpack[_EventFields]) -> Event:
        return Event(agent_kind=self.agent_kind, kind=kind, channel=channel, **fields)

    def _attach_handle(self, obj: JsonObj, events: list[Event]) -> list[Event]:
        thread_id = obj.get("thread_id")
        if self.session_id is None and isinstance(thread_id, str) and thread_id.strip():
            self.session_id = thread_id
            size = len(thread_id.encode())
            if size > MAX_SESSION_ID_BYTES:
                self.session_id = None
                self._facet_pending = False
                return [*events, self._event(
                    EventKind.STATUS, "status", message=f"session handle id oversize: len_bytes={size}"
                )]
            self._facet_pending = True
        if not self._facet_pending or self.session_id is None:
            return events
        self._facet_pending = False
        facet = handle_facet(self.session_id)
        for index, event in enumerate(events):
            if event.kind is EventKind.STATUS and event.data is None:
                events = list(events)
                events[index] = Event(event.agent_kind, event.kind, event.channel, event.text, event.message, facet)
                return events
        return [*events, self._event(EventKind.STATUS, "status", data=facet)]

    def _map(self, obj: JsonObj) -> list[Event]:
        kind = obj["type"]
        if kind == "error":
            return self._top_level_error(obj)
        if kind in ("thread.started", "thread.resumed", "turn.started", "turn.completed"):
            return [self._event(EventKind.STATUS, "status")]
        if kind == "turn.failed":
            return [self._event(EventKind.STATUS, "status", message="turn failed")]
        if kind.startswith("item."):
            return self._item(kind, obj)
        return [self._event(EventKind.UNKNOWN, None, data={"type": kind[:128]})]

    def _top_level_error(self, obj: JsonObj) -> list[Event]:
        message = obj.get("message")
        message = message if isinstance(message, str) else ""
        code = obj.get("code")
        if self.flags.has_add_dirs and message == ADD_DIRS_RUNTIME_REJECTION:
            self.backend_error = ADD_DIRS_RUNTIME_REJECTION
            return []
        if self.flags.has_model and code == "model_runtime_rejection":
            self.backend_error = self.backend_error or MODEL_RUNTIME_REJECTION
            return []
        if self.flags.resume is not None:
            # Resume flows swallow transport errors; the last one may classify a selection failure.
            self.last_transport_message = message
            self.last_transport_code = code if isinstance(code, str) else None
            return []
        return [self._event(EventKind.ERROR, "error", message=message or f"{self.agent_kind} reported an error")]

    def _item(self, kind: str, obj: JsonObj) -> list[Event]:
        nested = obj.get("item")
        item: JsonObj = nested if isinstance(nested, dict) else obj
        item_type = item.get("type") if isinstance(nested, dict) else obj.get("item_type")
        if not isinstance(item_type, str):
            item_type = obj.get("item_type") if isinstance(obj.get("item_type"), str) else "unknown"
        phase = kind.removeprefix("item.")
        if item_type in TEXT_ITEM_TYPES:
            return self._text_item(item_type, phase, item)
        if item_type in TOOL_ITEM_TYPES:
            return [self._tool_item(item_type, phase, item)]
        if phase == "failed":
            error = obj.get("error")
            message = error.get("message") if isinstance(error, dict) else None
            return [self._event(EventKind.ERROR, "error", message=message if isinstance(message, str)
                                else f"{self.agent_kind} item failed")]
        if item_type == "todo_list":
            return [self._event(EventKind.STATUS, "status")]
        if item_type == "error":
            # Codex uses error items for non-fatal warnings (model metadata, resume model switch), often
            # before turn.started: they are status, not the run's failure.
            message = item.get("message")
            return [self._event(EventKind.STATUS, "warning", message=message if isinstance(message, str) else None)]
        return [self._event(EventKind.UNKNOWN, None, data={"type": kind, "item_type": str(item_type)[:128]})]

    def _text_item(self, item_type: str, phase: str, item: JsonObj) -> list[Event]:
        text = item.get("text")
        if not isinstance(text, str):
            content = item.get("content")
            text = content.get("text") if isinstance(content, dict) else None
        if not isinstance(text, str):
            delta = item.get("text_delta") or item.get("delta")
            text = delta if isinstance(delta, str) else None
        if not text:
            return [self._event(EventKind.STATUS, "status")]
        if item_type == "agent_message" and phase == "completed":
            self.final_message = text
        return [self._event(EventKind.TEXT_OUTPUT, "assistant", text=text)]

    def _tool_item(self, item_type: str, phase: str, item: JsonObj) -> Event:
        exit_code = item.get("exit_code")
        if phase == "failed":
            facet = tool_facet(item.get("id"), item_type, "fail", "failed", None, self.session_id)
            return self._event(EventKind.TOOL_RESULT, "tool", data=facet)
        if phase == "completed":
            failed = item.get("status") == "failed" and exit_code is None
            facet = tool_facet(item.get("id"), item_type, "fail" if failed else "complete",
                               "failed" if failed else "completed", exit_code, self.session_id)
            return self._event(EventKind.TOOL_RESULT, "tool", data=facet)
        tool_phase = "delta" if phase in ("delta", "updated") else "start"
        facet = tool_facet(item.get("id"), item_type, tool_phase, "running", exit_code, self.session_id)
        return self._event(EventKind.TOOL_CALL, "tool", data=facet)

    # -- exit ------------------------------------------------------------------------------------
    def finish(self, exit_code: int, stderr: bytes) -> ExecOutcome:
        """Classify the exit. Call after every line has gone through ``feed``."""
        if self.backend_error is not None:
            return self._failed(self.backend_error, exit_code)
        if exit_code == 0:
            return ExecOutcome(None, None, exit_code)
        text = stderr.decode("utf-8", "replace")
        if self.flags.external_sandbox and _BYPASS_FLAG in text:
            lowered = text.lower()
            if any(word in lowered for word in _UNKNOWN_FLAG_WORDS):
                return self._failed(EXTERNAL_SANDBOX_FLAG_UNSUPPORTED, exit_code)
        resume = self.flags.resume
        if resume is not None and self.session_id is None and not self.saw_stream_error:
            signals = (text, self.last_transport_message or "", self.last_transport_code or "")
            if any(is_not_found_signal(signal) for signal in signals):
                return self._failed(selection_failure_message(resume), exit_code)
        message = f"{self.agent_kind} exited non-zero: {describe_exit(exit_code)} (stderr redacted)"
        return ExecOutcome(None, self._event(EventKind.ERROR, "error", message=message), exit_code)

    def _failed(self, message: str, exit_code: int) -> ExecOutcome:
        self.backend_error = message
        return ExecOutcome(message, self._event(EventKind.ERROR, "error", message=message), exit_code)
