"""Params and responses of the small thread controls of Codex 0.169: the out-of-band elicitation counter,
thread/sample/cancel, thread/prediction/request, thread/realtime/listVoices, thread/guardianReview and
thread/approveGuardianDeniedAction, plus the core ``GuardianAssessmentEvent`` the last one carries.

The event is Codex's *core* type (snake_case keys, ``type``-tagged action), not a v2 wire object, so it is
a plain pydantic model validated strictly and reported in serde's words (``pycodex.jsonrpc.serde``).
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from pycodex.json_types import JsonObj, JsonValue

from .base import ParamsModel, WireModel
from .common import RequestId, ThreadId

__all__ = [
    "REALTIME_VOICES",
    "GuardianAssessmentEvent",
    "RealtimeVoicesList",
    "ThreadApproveGuardianDeniedActionParams",
    "ThreadElicitationParams",
    "ThreadElicitationResponse",
    "ThreadGuardianAssessment",
    "ThreadGuardianReviewParams",
    "ThreadGuardianReviewResponse",
    "ThreadPredictionRequestParams",
    "ThreadRealtimeListVoicesResponse",
    "ThreadSampleCancelParams",
]


class ThreadElicitationParams(ParamsModel):
    """thread/increment_elicitation and thread/decrement_elicitation take the same params."""

    METHOD: ClassVar[str] = "thread/increment_elicitation"

    thread_id: ThreadId


class ThreadElicitationResponse(WireModel):
    """The result of `thread/decrement_elicitation`, `thread/increment_elicitation`."""

    count: int
    #: Timeout accounting stays paused while any out-of-band elicitation is pending (count > 0).
    paused: bool


class ThreadSampleCancelParams(ParamsModel):
    """Params of `thread/sample/cancel`. Codex 0.169 refuses unknown keys here (serde ``deny_unknown_fields``);
    pycodex ignores them, as on every other method, so a newer client is not cut off."""

    METHOD: ClassVar[str] = "thread/sample/cancel"

    request_id: RequestId


class ThreadPredictionRequestParams(ParamsModel):
    """Params of `thread/prediction/request`."""

    METHOD: ClassVar[str] = "thread/prediction/request"

    thread_id: ThreadId
    source_turn_id: str


class RealtimeVoicesList(WireModel):
    """The realtime voices by API version, with each version's default."""

    v1: list[str]
    v2: list[str]
    v3: list[str] = Field(default_factory=list)  # Codex 0.169 defaults it to []
    default_v1: str = Field(alias="defaultV1")
    default_v2: str = Field(alias="defaultV2")


class ThreadRealtimeListVoicesResponse(WireModel):
    """The result of `thread/realtime/listVoices`."""

    voices: RealtimeVoicesList


#: The voices Codex 0.169 lists for each realtime protocol version, in its order.
REALTIME_VOICES = RealtimeVoicesList(
    v1=["juniper", "maple", "spruce", "ember", "vale", "breeze", "arbor", "sol", "cove"],
    v2=["alloy", "ash", "ballad", "coral", "echo", "sage", "shimmer", "verse", "marin", "cedar"],
    v3=[
        "juniper", "maple", "spruce", "ember", "vale", "breeze", "arbor", "sol", "cove", "aube", "bubbie",
        "haetsal", "hanul", "himari", "leher", "miko", "neer", "porto", "rindo", "rio", "rivage", "selva",
        "sonna", "tinta", "viola",
    ],
    default_v1="cove",
    default_v2="marin",
)


class ThreadGuardianReviewParams(ParamsModel):
    """Params of `thread/guardianReview`."""

    METHOD: ClassVar[str] = "thread/guardianReview"

    thread_id: ThreadId


class ThreadGuardianAssessment(WireModel):
    """The guardian's verdict on an action: outcome, rationale, risk level and user authorization."""

    outcome: Literal["allow", "deny"]
    rationale: str
    risk_level: Literal["low", "medium", "high", "critical"]
    user_authorization: Literal["unknown", "low", "medium", "high"]


class ThreadGuardianReviewResponse(WireModel):
    """The result of `thread/guardianReview`."""

    call_id: str
    #: Null when the current policy (or a remembered approval) skips the review.
    assessment: ThreadGuardianAssessment | None = None


class ThreadApproveGuardianDeniedActionParams(ParamsModel):
    """Params of `thread/approveGuardianDeniedAction`."""

    METHOD: ClassVar[str] = "thread/approveGuardianDeniedAction"

    thread_id: ThreadId
    #: A serialized core GuardianAssessmentEvent; parsed by the handler so errors read as Codex's.
    event: JsonValue


# -- the core GuardianAssessmentEvent -------------------------------------------------------------
class _Core(BaseModel):
    """A core (snake_case) serde struct: unknown keys ignored, as serde does without deny_unknown_fields."""

    model_config = ConfigDict(extra="ignore")


CommandSource = Literal["shell", "unified_exec"]


class CommandAction(_Core):
    """The guardian action `command`: a shell command (and its cwd) to review."""

    type: Literal["command"]
    source: CommandSource
    command: str
    cwd: str


class ExecveAction(_Core):
    """The `"type": "execve"` variant (`ExecveAction`)."""

    type: Literal["execve"]
    source: CommandSource
    program: str
    argv: list[str]
    cwd: str


class WriteStdinAction(_Core):
    """The `"type": "write_stdin"` variant (`WriteStdinAction`)."""

    type: Literal["write_stdin"]
    approval_id: str
    process_id: str
    stdin: str
    cwd: str


class ApplyPatchAction(_Core):
    """The `"type": "apply_patch"` variant (`ApplyPatchAction`)."""

    type: Literal["apply_patch"]
    cwd: str
    files: list[str]


class NetworkAccessAction(_Core):
    """The `"type": "network_access"` variant (`NetworkAccessAction`)."""

    type: Literal["network_access"]
    target: str
    host: str
    protocol: Literal["http", "https", "socks5_tcp", "socks5_udp"]
    port: Annotated[int, Field(ge=0, le=65_535)]


class McpToolCallAction(_Core):
    """The `"type": "mcp_tool_call"` variant (`McpToolCallAction`)."""

    type: Literal["mcp_tool_call"]
    server: str
    tool_name: str
    connector_id: str | None = None
    connector_name: str | None = None
    tool_title: str | None = None


class RequestPermissionsAction(_Core):
    """The `"type": "request_permissions"` variant (`RequestPermissionsAction`)."""

    type: Literal["request_permissions"]
    reason: str | None = None
    permissions: JsonObj


GuardianAction = Annotated[
    CommandAction | ExecveAction | WriteStdinAction | ApplyPatchAction | NetworkAccessAction
    | McpToolCallAction | RequestPermissionsAction,
    Field(discriminator="type"),
]


class GuardianAssessmentEvent(_Core):
    """Fields in Codex's declaration order (the order serde reports missing ones in)."""

    id: str
    target_item_id: str | None = None
    turn_id: str = ""
    started_at_ms: int = 0
    completed_at_ms: int | None = None
    status: Literal["in_progress", "approved", "denied", "timed_out", "aborted"]
    risk_level: Literal["low", "medium", "high", "critical"] | None = None
    user_authorization: Literal["unknown", "low", "medium", "high"] | None = None
    rationale: str | None = None
    decision_source: JsonValue = None
    action: GuardianAction
