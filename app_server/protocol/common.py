"""Small shared wire types: ids, string enums, policies, TurnError/codexErrorInfo, token usage, rate limits.

Enumerations are `Literal` aliases so values stay plain strings in code and on the wire.
"""

# Annotations are evaluated as the classes are made (no `from __future__ import annotations`): pydantic
# would otherwise compile each string annotation again, ~15% of this module's import on the thread/start path.
from typing import Annotated, Literal, TypeAlias

from pydantic import ConfigDict, Field

from pycodex.json_types import JsonObj

from .base import SerdeType, WireModel

ThreadId: TypeAlias = str
TurnId: TypeAlias = str
ItemId: TypeAlias = str
RequestId: TypeAlias = int | str
AbsolutePath: TypeAlias = str
ReasoningEffort: TypeAlias = Annotated[str, Field(min_length=1)]
# Optional u32 param (pagination limits); the marker lets errors say `expected u32` like serde.
OptionalU32: TypeAlias = Annotated[int | None, Field(ge=0, le=4_294_967_295), SerdeType("u32")]

SandboxMode = Literal["read-only", "workspace-write", "danger-full-access"]
ApprovalPolicyName = Literal["untrusted", "on-request", "never"]
ApprovalsReviewer = Literal["user", "auto_review", "guardian_subagent"]
Personality = Literal["none", "friendly", "pragmatic"]
ReasoningSummary = Literal["auto", "concise", "detailed", "none"]
ThreadHistoryMode = Literal["legacy", "paginated"]
ThreadStartSource = Literal["startup", "clear"]
ThreadActiveFlag = Literal["waitingOnApproval", "waitingOnUserInput"]
TurnStatus = Literal["completed", "interrupted", "failed", "inProgress"]
TurnItemsView = Literal["notLoaded", "summary", "full"]
SortDirection = Literal["asc", "desc"]
ThreadSortKey = Literal["created_at", "updated_at", "recency_at", "section_position"]
ThreadSourceKind = Literal[
    "cli",
    "vscode",
    "exec",
    "appServer",
    "subAgent",
    "subAgentReview",
    "subAgentCompact",
    "subAgentThreadSpawn",
    "subAgentOther",
    "unknown",
]
RemoteControlConnectionStatus = Literal["disabled", "connecting", "connected", "errored"]
NetworkAccess = Literal["restricted", "enabled"]
MultiAgentModeName = Literal["explicitRequestOnly", "proactive"]

# ---- approval policy (`AskForApproval`) --------------------------------------------------------


class GranularApprovalSettings(WireModel):
    """The body of `{"granular": {...}}`; its keys are snake_case on the wire."""

    sandbox_approval: bool = Field(alias="sandbox_approval")
    rules: bool = Field(alias="rules")
    skill_approval: bool = Field(default=False, alias="skill_approval")
    request_permissions: bool = Field(default=False, alias="request_permissions")
    mcp_elicitations: bool = Field(alias="mcp_elicitations")


class GranularApprovalPolicy(WireModel):
    """The approval policy `{granular: {...}}`: which kinds of action ask for approval."""

    granular: GranularApprovalSettings


AskForApproval: TypeAlias = Annotated[
    ApprovalPolicyName | GranularApprovalPolicy, Field(union_mode="left_to_right")
]


class CustomMultiAgentMode(WireModel):
    """The multi-agent mode `{custom: "..."}`: a named mode of the client's."""

    custom: str


MultiAgentMode: TypeAlias = Annotated[
    MultiAgentModeName | CustomMultiAgentMode, Field(union_mode="left_to_right")
]

# ---- sandbox policy (response side, camelCase tagged union) ------------------------------------


class DangerFullAccessSandboxPolicy(WireModel):
    """The `"type": "dangerFullAccess"` variant (`DangerFullAccessSandboxPolicy`)."""

    type: Literal["dangerFullAccess"] = "dangerFullAccess"


class ReadOnlySandboxPolicy(WireModel):
    """The `"type": "readOnly"` variant (`ReadOnlySandboxPolicy`)."""

    type: Literal["readOnly"] = "readOnly"
    network_access: bool = False


class ExternalSandboxSandboxPolicy(WireModel):
    """The `"type": "externalSandbox"` variant (`ExternalSandboxSandboxPolicy`)."""

    type: Literal["externalSandbox"] = "externalSandbox"
    network_access: NetworkAccess = "restricted"


class WorkspaceWriteSandboxPolicy(WireModel):
    """The `"type": "workspaceWrite"` variant (`WorkspaceWriteSandboxPolicy`)."""

    type: Literal["workspaceWrite"] = "workspaceWrite"
    writable_roots: list[AbsolutePath] = Field(default_factory=list)
    network_access: bool = False
    exclude_tmpdir_env_var: bool = False
    exclude_slash_tmp: bool = False


SandboxPolicy: TypeAlias = Annotated[
    DangerFullAccessSandboxPolicy
    | ReadOnlySandboxPolicy
    | ExternalSandboxSandboxPolicy
    | WorkspaceWriteSandboxPolicy,
    Field(discriminator="type"),
]


class ActivePermissionProfile(WireModel):
    """The permission profile in effect: its id and the one it extends."""

    id: str
    extends: str | None = None


# ---- thread status ----------------------------------------------------------------------------


class NotLoadedThreadStatus(WireModel):
    """The `"type": "notLoaded"` variant (`NotLoadedThreadStatus`)."""

    type: Literal["notLoaded"] = "notLoaded"


class IdleThreadStatus(WireModel):
    """The `"type": "idle"` variant (`IdleThreadStatus`)."""

    type: Literal["idle"] = "idle"


class SystemErrorThreadStatus(WireModel):
    """The `"type": "systemError"` variant (`SystemErrorThreadStatus`)."""

    type: Literal["systemError"] = "systemError"


class ActiveThreadStatus(WireModel):
    """The `"type": "active"` variant (`ActiveThreadStatus`)."""

    type: Literal["active"] = "active"
    active_flags: list[ThreadActiveFlag] = Field(default_factory=list)


ThreadStatus: TypeAlias = Annotated[
    NotLoadedThreadStatus | IdleThreadStatus | SystemErrorThreadStatus | ActiveThreadStatus,
    Field(discriminator="type"),
]

# ---- errors -----------------------------------------------------------------------------------

CodexErrorName = Literal[
    "contextWindowExceeded",
    "sessionBudgetExceeded",
    "usageLimitExceeded",
    "rateLimitExceeded",
    "flexUnavailable",
    "serverOverloaded",
    "modelNotFound",
    "policyCapacityUnavailable",
    "cyberPolicy",
    "misalignmentPolicyViolation",
    "tooManyDenials",
    "internalServerError",
    "unauthorized",
    "badRequest",
    "threadRollbackFailed",
    "sandboxError",
    "other",
    "inferenceHookDenied",
]


class HttpStatusDetail(WireModel):
    """The HTTP status a failed model request got (`httpStatusCode`, null if none)."""

    http_status_code: int | None = None


class HttpConnectionFailedInfo(WireModel):
    """The error info `{httpConnectionFailed: {...}}`: the model request could not connect."""

    http_connection_failed: HttpStatusDetail


class ResponseStreamConnectionFailedInfo(WireModel):
    """The error info `{responseStreamConnectionFailed: {...}}`."""

    response_stream_connection_failed: HttpStatusDetail


class ResponseStreamDisconnectedInfo(WireModel):
    """The error info `{responseStreamDisconnected: {...}}`: the stream ended early."""

    response_stream_disconnected: HttpStatusDetail


class ResponseTooManyFailedAttemptsInfo(WireModel):
    """The error info `{responseTooManyFailedAttempts: {...}}`: retries ran out."""

    response_too_many_failed_attempts: HttpStatusDetail


class NonSteerableDetail(WireModel):
    """Which kind of turn cannot be steered (`turnKind`)."""

    turn_kind: str


class ActiveTurnNotSteerableInfo(WireModel):
    """The error info `{activeTurnNotSteerable: {...}}`: turn/steer met a turn it cannot steer."""

    active_turn_not_steerable: NonSteerableDetail


# A camelCase name or a single-key object. Unknown names/objects pass through as plain values so
# stored errors from newer versions still load.
CodexErrorInfo: TypeAlias = Annotated[
    CodexErrorName
    | HttpConnectionFailedInfo
    | ResponseStreamConnectionFailedInfo
    | ResponseStreamDisconnectedInfo
    | ResponseTooManyFailedAttemptsInfo
    | ActiveTurnNotSteerableInfo
    | str
    | JsonObj,
    Field(union_mode="left_to_right"),
]


class TurnError(WireModel):
    """Why a turn failed: the message, Codex's error info and any details."""

    message: str
    codex_error_info: CodexErrorInfo | None = None
    additional_details: str | None = None
    misalignment: JsonObj | None = None


# ---- token usage and rate limits --------------------------------------------------------------


class TokenUsageBreakdown(WireModel):
    """Token counts: total, input (cached, cache-written), output and reasoning output."""

    total_tokens: int = 0
    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_output_tokens: int = 0


class ThreadTokenUsage(WireModel):
    """A thread's token usage: the total, the last turn's, and the model's context window."""

    total: TokenUsageBreakdown
    last: TokenUsageBreakdown
    model_context_window: int | None = None


class RateLimitSnapshot(WireModel):
    """The account's rate limits at one moment: the primary and secondary windows, credits and plan type."""

    limit_id: str | None = None
    limit_name: str | None = None
    normal_model_slug: str | None = None
    primary: JsonObj | None = None
    secondary: JsonObj | None = None
    credits: JsonObj | None = None
    individual_limit: JsonObj | None = None
    spend_control_reached: bool | None = None
    plan_type: str | None = None
    rate_limit_reached_type: str | None = None


# ---- read state -------------------------------------------------------------------------------


class ThreadStartUnreadPosition(WireModel):
    """The `"type": "threadStart"` variant (`ThreadStartUnreadPosition`)."""

    type: Literal["threadStart"] = "threadStart"


class TurnUnreadPosition(WireModel):
    """The `"type": "turn"` variant (`TurnUnreadPosition`)."""

    type: Literal["turn"] = "turn"
    turn_id: TurnId


ThreadUnreadPosition: TypeAlias = Annotated[
    ThreadStartUnreadPosition | TurnUnreadPosition, Field(discriminator="type")
]


class ThreadReadState(WireModel):
    """The first unread position in a durable local thread."""

    first_unread: ThreadUnreadPosition | None = None
    revision: str


class TextPosition(WireModel):
    """A 1-based line and column in a config file."""

    line: int
    column: int


class TextRange(WireModel):
    """Where in the file a config warning points."""

    start: TextPosition
    end: TextPosition


class CollaborationModeSettings(WireModel):
    """A collaboration mode's settings; Codex keeps these keys in snake_case on the wire."""

    model_config = ConfigDict(alias_generator=None, populate_by_name=True, extra="ignore", defer_build=True)

    model: str
    reasoning_effort: ReasoningEffort | None = None
    developer_instructions: str | None = None


class CollaborationMode(WireModel):
    """The effective collaboration mode of a thread (pycodex runs every thread in `default`)."""

    mode: Literal["plan", "default"]
    settings: CollaborationModeSettings
