"""Turn and the turn/* methods: turn/start, turn/steer, turn/interrupt (params and responses)."""

# Annotations are evaluated as the classes are made (no `from __future__ import annotations`): pydantic
# would otherwise compile each string annotation again, ~15% of this module's import on the thread/start path.
from typing import Annotated, ClassVar, Literal, TypeAlias

from pydantic import Field

from pycodex.json_types import JsonObj, JsonValue

from .base import EXPERIMENTAL, EmptyObject, ExperimentalVariant, ParamsModel, WireModel
from .common import (
    AbsolutePath,
    ApprovalsReviewer,
    AskForApproval,
    CollaborationMode,
    MultiAgentMode,
    OptionalU32,
    Personality,
    ReasoningEffort,
    ReasoningSummary,
    SandboxPolicy,
    SortDirection,
    ThreadId,
    TurnError,
    TurnId,
    TurnItemsView,
    TurnStatus,
)
from .items import ThreadItem, UserInput

#: Codex 0.169's `CyberAccessProgram` enum (turn/start, experimental).
CyberAccessProgram: TypeAlias = Literal["standard", "daybreakBlue", "daybreakRed"]

GRANULAR_APPROVAL = ExperimentalVariant(key="granular", descriptor="askForApproval.granular")


class Turn(WireModel):
    """A turn as Codex emits it: `startedAt`/`completedAt` in unix seconds, `durationMs` in ms."""

    id: TurnId
    root_turn_id: str | None = None
    items: list[ThreadItem] = Field(default_factory=list)
    items_view: TurnItemsView = "full"
    status: TurnStatus
    error: TurnError | None = None
    started_at: int | None = None
    completed_at: int | None = None
    duration_ms: int | None = None


class TurnEnvironmentParams(WireModel):
    """The execution environment a turn runs in, its working directory and workspace roots."""

    environment_id: str
    cwd: str
    runtime_workspace_roots: list[str] | None = None


class TurnToolOutput(WireModel):
    """A client-side tool's output handed back with `turn/start` (accepted as Codex types it; pycodex
    offers the model no client-side tools, so there is never a call for it to answer)."""

    name: str
    namespace: str | None = None
    output: str | list[JsonValue]
    retain: bool = False


class ThreadResumeInitialTurnsPageParams(WireModel):
    """`thread/resume`'s request for a first page of turns in its answer (its ``limit`` and order)."""

    items_view: TurnItemsView | None = None
    limit: OptionalU32 = None
    sort_direction: SortDirection | None = None


class TurnStartParams(ParamsModel):
    """Params of `turn/start`."""

    METHOD: ClassVar[str] = "turn/start"

    thread_id: ThreadId
    input: list[UserInput]
    client_user_message_id: str | None = None
    root_turn_id: str | None = None
    parent_turn_id: str | None = None
    turn_trigger: str | None = None
    cwd: str | None = None
    approval_policy: Annotated[AskForApproval | None, GRANULAR_APPROVAL] = None
    approvals_reviewer: ApprovalsReviewer | None = None
    sandbox_policy: SandboxPolicy | None = None
    model: str | None = None
    service_tier: str | None = None
    service_tier_for_turn: str | None = None
    effort: ReasoningEffort | None = None
    summary: ReasoningSummary | None = None
    personality: Personality | None = None
    output_schema: JsonValue = None
    tool_output: TurnToolOutput | None = None
    disabled_plugin_ids: list[str] | None = None
    # experimental
    additional_context: Annotated[JsonObj | None, EXPERIMENTAL] = None
    collaboration_mode: Annotated[CollaborationMode | None, EXPERIMENTAL] = None
    cyber_access_program: Annotated[CyberAccessProgram | None, EXPERIMENTAL] = None
    environments: Annotated[list[TurnEnvironmentParams] | None, EXPERIMENTAL] = None
    multi_agent_mode: Annotated[MultiAgentMode | None, EXPERIMENTAL] = None
    permissions: Annotated[str | None, EXPERIMENTAL] = None
    responsesapi_client_metadata: Annotated[dict[str, str] | None, EXPERIMENTAL] = None
    responsesapi_client_metadata_patch: Annotated[dict[str, str] | None, EXPERIMENTAL] = None
    runtime_workspace_roots: Annotated[list[AbsolutePath] | None, EXPERIMENTAL] = None


class TurnStartResponse(WireModel):
    """The result of `turn/start`."""

    turn: Turn


class TurnSteerParams(ParamsModel):
    """Params of `turn/steer`."""

    METHOD: ClassVar[str] = "turn/steer"

    thread_id: ThreadId
    expected_turn_id: TurnId
    input: list[UserInput]
    client_user_message_id: str | None = None
    additional_context: Annotated[JsonObj | None, EXPERIMENTAL] = None
    responsesapi_client_metadata: Annotated[dict[str, str] | None, EXPERIMENTAL] = None
    responsesapi_client_metadata_patch: Annotated[dict[str, str] | None, EXPERIMENTAL] = None


class TurnSteerResponse(WireModel):
    """The result of `turn/steer`."""

    turn_id: TurnId


class TurnInterruptParams(ParamsModel):
    """Params of `turn/interrupt`."""

    METHOD: ClassVar[str] = "turn/interrupt"

    thread_id: ThreadId
    turn_id: TurnId


class TurnInterruptResponse(EmptyObject):
    """The result of `turn/interrupt`."""

    pass
