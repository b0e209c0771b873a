"""Session modes (approval + sandbox presets), the model picker and the slash commands of an ACP session.

The modes are Codex's three presets, as codex-acp offers them: ``read-only`` (asks before it writes or uses
the network), ``auto`` (works in the workspace, asks for anything beyond it) and ``full-access`` (never asks,
no sandbox). A mode becomes the next ``turn/start``'s ``approvalPolicy`` and ``sandboxPolicy``, which stick to
the thread. Models are a ``session/set_config_option`` select (``configId`` ``model``), as ACP schema 1.19 has
it (the unstable ``session/set_model`` it replaced is not in the SDK's router).
"""

from __future__ import annotations

from dataclasses import dataclass

from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
    UnstructuredCommandInput,
)

from acp_agent.updates import obj
from pycodex.json_types import JsonObj

__all__ = ["COMMANDS", "MODES", "Mode", "config_options", "mode_for", "mode_state", "split_command"]


@dataclass(frozen=True)
class Mode:
    """One preset: its ACP id and name, and what it sets on the thread."""

    id: str
    name: str
    description: str
    approval_policy: str
    sandbox: str  # thread/start's kebab-case form

    def sandbox_policy(self, cwd: str) -> JsonObj:
        """The turn/start ``sandboxPolicy`` object of this mode."""
        if self.sandbox == "read-only":
            return {"type": "readOnly"}
        if self.sandbox == "danger-full-access":
            return {"type": "dangerFullAccess"}
        return {"type": "workspaceWrite", "writableRoots": [cwd], "networkAccess": False}


MODES = (
    Mode("read-only", "Read Only", "Reads files; asks before editing files or running commands that write.",
         "on-request", "read-only"),
    Mode("auto", "Default", "Edits files and runs commands in the workspace; asks for anything beyond it.",
         "on-request", "workspace-write"),
    Mode("full-access", "Full Access", "Edits files and runs commands anywhere, with network access, without asking.",
         "never", "danger-full-access"),
)
_BY_SANDBOX = {"readOnly": "read-only", "workspaceWrite": "auto", "dangerFullAccess": "full-access"}


def mode_for(mode_id: str) -> Mode | None:
    """The preset named ``mode_id``."""
    return next((m for m in MODES if m.id == mode_id), None)


def mode_state(started: JsonObj) -> SessionModeState:
    """The modes, the current one read from a thread/start or thread/resume answer's sandbox."""
    sandbox = obj(started.get("sandbox"))
    current = _BY_SANDBOX.get(str(sandbox.get("type")), "auto")
    return SessionModeState(current_mode_id=current,
                            available_modes=[SessionMode(id=m.id, name=m.name, description=m.description) for m in MODES])


def config_options(models: list[JsonObj], current_model: str, current_mode: str) -> list[SessionConfigOptionSelect]:
    """The session's pickers: its mode and its model (``model/list``'s entries, the thread's model first if absent)."""
    choices = [SessionConfigSelectOption(value=str(m.get("model") or m.get("id")),
                                         name=str(m.get("displayName") or m.get("model") or m.get("id")),
                                         description=m.get("description") or None) for m in models]
    if current_model and all(c.value != current_model for c in choices):
        choices.insert(0, SessionConfigSelectOption(value=current_model, name=current_model))
    modes = [SessionConfigSelectOption(value=m.id, name=m.name, description=m.description) for m in MODES]
    return [
        SessionConfigOptionSelect(id="mode", name="Mode", category="mode", type="select", current_value=current_mode,
                                  options=modes),
        SessionConfigOptionSelect(id="model", name="Model", category="model", type="select",
                                  current_value=current_model, options=choices),
    ]


#: The slash commands (``available_commands_update``): each runs an app-server request instead of a turn.
COMMANDS = (
    AvailableCommand(name="compact", description="Summarize the conversation so far to free context"),
    AvailableCommand(name="rename", description="Name this session",
                     input=AvailableCommandInput(root=UnstructuredCommandInput(hint="the new name"))),
    AvailableCommand(name="review", description="Review the uncommitted changes in the working tree"),
)


def split_command(text: str) -> tuple[str, str] | None:
    """``("compact", "")`` for a prompt ``/compact``; None when the prompt is not one of ``COMMANDS``."""
    if not text.startswith("/"):
        return None
    name, _, rest = text[1:].partition(" ")
    if not any(c.name == name for c in COMMANDS):
        return None
    return name, rest.strip()
