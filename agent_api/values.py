"""The public value types: requests, events, completions, and the capability/extension ids."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pycodex.json_types import JsonObj, JsonValue

__all__ = [
    "CAP_SESSION_HANDLE",
    "EXT_ADD_DIRS",
    "EXT_APPROVAL_POLICY",
    "EXT_EXTERNAL_SANDBOX",
    "EXT_FORK",
    "EXT_MODEL",
    "EXT_NON_INTERACTIVE",
    "EXT_RESUME",
    "EXT_SANDBOX_MODE",
    "Completion",
    "Event",
    "EventKind",
    "RunRequest",
    "SessionSelector",
    "handle_facet",
]

EXT_ADD_DIRS = "agent_api.exec.add_dirs.v1"
EXT_NON_INTERACTIVE = "agent_api.exec.non_interactive"
EXT_EXTERNAL_SANDBOX = "agent_api.exec.external_sandbox.v1"
EXT_MODEL = "agent_api.config.model.v1"
EXT_RESUME = "agent_api.session.resume.v1"
EXT_FORK = "agent_api.session.fork.v1"
EXT_APPROVAL_POLICY = "backend.codex.exec.approval_policy"
EXT_SANDBOX_MODE = "backend.codex.exec.sandbox_mode"
CAP_SESSION_HANDLE = "agent_api.session.handle.v1"


class EventKind(enum.Enum):
    """What an event is about; ``Unknown`` carries backend events the wrapper does not model."""

    STATUS = "status"
    TEXT_OUTPUT = "text_output"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    ERROR = "error"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Event:
    """One normalized event. ``text`` is the payload of TextOutput; ``message`` of Status and Error."""

    agent_kind: str
    kind: EventKind
    channel: str | None = None
    text: str | None = None
    message: str | None = None
    data: JsonValue = None

    @property
    def session_id(self) -> str | None:
        """The session id when this event carries the session-handle facet."""
        if isinstance(self.data, dict) and self.data.get("schema") == CAP_SESSION_HANDLE:
            session = self.data.get("session")
            if isinstance(session, dict) and isinstance(session.get("id"), str):
                return str(session["id"])
        return None


def handle_facet(session_id: str) -> JsonObj:
    """The session-handle facet carried by a Status event and by ``Completion.data``."""
    return {"schema": CAP_SESSION_HANDLE, "session": {"id": session_id}}


@dataclass(frozen=True, slots=True)
class SessionSelector:
    """Which earlier session to resume or fork: the newest one for the working dir, or one by id."""

    id: str | None = None

    @property
    def is_last(self) -> bool:
        """The newest session for the working dir is meant, not one by id."""
        return self.id is None

    def to_extension(self) -> dict[str, str]:
        """The selector as its extension value (``{"selector": "last"}`` or ``{"selector": "id", "id":
        ...}``)."""
        return {"selector": "last"} if self.id is None else {"selector": "id", "id": self.id}


@dataclass(frozen=True)
class RunRequest:
    """One run. ``extensions`` maps namespaced keys (see ``EXT_*``) to JSON values; ``model`` is a
    shorthand for ``agent_api.config.model.v1``. ``timeout`` is in seconds; 0 means none."""

    prompt: str
    working_dir: Path | str | None = None
    model: str | None = None
    timeout: float | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    extensions: Mapping[str, JsonValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Completion:
    """How a run ended. ``exit_code`` is the child's return code (negative: killed by that signal)."""

    exit_code: int
    final_text: str | None = None
    data: JsonValue = None

    @property
    def session_id(self) -> str | None:
        """The session id when the completion carries the session-handle facet."""
        if isinstance(self.data, Mapping) and self.data.get("schema") == CAP_SESSION_HANDLE:
            session = self.data.get("session")
            if isinstance(session, Mapping) and isinstance(session.get("id"), str):
                return str(session["id"])
        return None
