"""Models of the server notifications and server requests outside the turn stream, under Codex's names.

``notifications.NOTIFICATIONS`` and ``approvals.SERVER_REQUESTS`` describe the thread and turn traffic;
this module adds what the account, command, process, fs, skills and Windows-sandbox handlers and the MCP
tool approval send, and merges both into :data:`SERVER_NOTIFICATIONS` and :data:`ALL_SERVER_REQUESTS`,
the tables the schema export (and generate-ts) describe. Every model's fields are those pycodex fills in
(the handlers build the same keys); the names and shapes are Codex 0.169's.

Only the schema export imports this module: nothing here is needed at stdio start-up.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Annotated, Literal

from pydantic import Field

from pycodex.json_types import JsonObj, JsonValue

from .approvals import SERVER_REQUESTS
from .base import WireModel
from .common import ThreadId
from .notifications import NOTIFICATIONS
from .projects import ProjectChangedNotification, ThreadProjectUpdatedNotification

__all__ = [
    "ALL_SERVER_REQUESTS",
    "SERVER_NOTIFICATIONS",
    "AccountLoginCompletedNotification",
    "AccountUpdatedNotification",
    "CommandExecOutputDeltaNotification",
    "FsChangedNotification",
    "McpServerElicitationRequestParams",
    "McpServerElicitationRequestResponse",
    "ProcessExitedNotification",
    "ProcessOutputDeltaNotification",
    "SkillsChangedNotification",
    "WindowsSandboxSetupCompletedNotification",
]

AuthMode = Literal["apikey", "chatgpt", "chatgptAuthTokens"]
OutputStream = Literal["stdout", "stderr"]
#: Codex's ChatGPT plan names (pycodex signs in with API keys only, so it sends null).
PlanType = Literal[
    "free", "go", "plus", "pro", "prolite", "promax", "team", "self_serve_business_prolite",
    "self_serve_business_usage_based", "business", "ent26", "enterprise_cbp_automation",
    "enterprise_cbp_usage_based", "enterprise", "edu", "edu_plus", "edu_pro", "sci", "sci_plus", "unknown",
]


class AccountLoginCompletedNotification(WireModel):
    """Params of `account/login/completed`, sent after `account/login/start` stored the credentials."""

    login_id: str | None = None
    success: bool
    error: str | None = None
    onboarding_entrypoint: Literal["life_sciences"] | None = None


class AccountUpdatedNotification(WireModel):
    """Params of `account/updated`: the auth mode after a login or logout (pycodex knows no plan)."""

    auth_mode: AuthMode | None = None
    plan_type: PlanType | None = None


class CommandExecOutputDeltaNotification(WireModel):
    """Params of `command/exec/outputDelta`: one base64 chunk of a streaming `command/exec`."""

    process_id: str
    stream: OutputStream
    delta_base64: str
    cap_reached: bool


class ProcessOutputDeltaNotification(WireModel):
    """Params of `process/outputDelta`: one base64 chunk of a streaming `process/spawn`."""

    process_handle: str
    stream: OutputStream
    delta_base64: str
    cap_reached: bool


class ProcessExitedNotification(WireModel):
    """Params of `process/exited`, the last message about a `process/spawn`."""

    process_handle: str
    exit_code: int
    output_drain_timed_out: bool | None = None
    stdout: str
    stdout_cap_reached: bool
    stderr: str
    stderr_cap_reached: bool


class FsChangedNotification(WireModel):
    """Params of `fs/changed`, for `fs/watch` subscribers."""

    watch_id: str
    changed_paths: list[str]


class SkillsChangedNotification(WireModel):
    """Params of `skills/changed` (empty): an invalidation signal to re-run `skills/list`."""


class WindowsSandboxSetupCompletedNotification(WireModel):
    """Params of `windowsSandbox/setupCompleted` (on other platforms: success false, with the reason)."""

    mode: Literal["elevated", "unelevated"]
    success: bool
    error: str | None = None


class McpServerElicitationRequestParams(WireModel):
    """Params of the `mcpServer/elicitation/request` server request pycodex sends to approve an MCP tool
    call: Codex's `form` mode (the only one pycodex sends), with the tool under `_meta`."""

    thread_id: ThreadId
    turn_id: str | None = None
    server_name: str
    mode: Literal["form"] = "form"
    meta: Annotated[JsonValue, Field(alias="_meta")] = None
    message: str
    requested_schema: JsonObj


class McpServerElicitationRequestResponse(WireModel):
    """The client's answer to `mcpServer/elicitation/request`."""

    action: Literal["accept", "decline", "cancel"]
    content: JsonValue = None
    meta: Annotated[JsonValue, Field(alias="_meta")] = None


#: Every server notification pycodex describes, method -> params model.
SERVER_NOTIFICATIONS: MappingProxyType[str, type[WireModel]] = MappingProxyType({
    **NOTIFICATIONS,
    "account/login/completed": AccountLoginCompletedNotification,
    "account/updated": AccountUpdatedNotification,
    "command/exec/outputDelta": CommandExecOutputDeltaNotification,
    "process/outputDelta": ProcessOutputDeltaNotification,
    "process/exited": ProcessExitedNotification,
    "fs/changed": FsChangedNotification,
    "skills/changed": SkillsChangedNotification,
    "windowsSandbox/setupCompleted": WindowsSandboxSetupCompletedNotification,
    "project/changed": ProjectChangedNotification,
    "thread/project/updated": ThreadProjectUpdatedNotification,
})

#: Every server request pycodex sends, method -> (params model, response model).
ALL_SERVER_REQUESTS: MappingProxyType[str, tuple[type[WireModel], type[WireModel]]] = MappingProxyType({
    **SERVER_REQUESTS,
    "mcpServer/elicitation/request": (McpServerElicitationRequestParams, McpServerElicitationRequestResponse),
})
