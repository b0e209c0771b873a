"""Thread and the thread/* methods (start, resume, fork, list, read, archive, unarchive, name/set,
loaded/list, unsubscribe, turns/list): params and responses, fields in Codex's emitted key order."""

# Annotations are evaluated as the classes are made (no `from __future__ import annotations`): pydantic
# would otherwise compile each string annotation again, ~15% of this module's import on the thread/start path.
from typing import Annotated, ClassVar, Literal

from pydantic import Field

from pycodex.json_types import JsonObj

from .base import EXPERIMENTAL, EmptyObject, ParamsModel, WireModel
from .common import (
    AbsolutePath,
    ActivePermissionProfile,
    ApprovalsReviewer,
    AskForApproval,
    CollaborationMode,
    MultiAgentMode,
    OptionalU32,
    Personality,
    ReasoningEffort,
    SandboxMode,
    SandboxPolicy,
    SortDirection,
    ThreadHistoryMode,
    ThreadId,
    ThreadReadState,
    ThreadSortKey,
    ThreadSourceKind,
    ThreadStartSource,
    ThreadStatus,
    TurnItemsView,
)
from .turns import GRANULAR_APPROVAL, ThreadResumeInitialTurnsPageParams, Turn, TurnEnvironmentParams

# `SessionSource`: "cli" | "vscode" | "exec" | "appServer" | "unknown" | {"custom": ...} | {"subAgent": ...}
SessionSource = str | JsonObj


class ThreadEnvironment(WireModel):
    """An environment selected by a loaded thread, independent of connection status."""

    environment_id: str
    cwd: str
    runtime_workspace_roots: list[str] = Field(default_factory=list)


class GitInfo(WireModel):
    """A thread's git metadata: commit, branch and origin URL."""

    sha: str | None = None
    branch: str | None = None
    origin_url: str | None = None


class Thread(WireModel):
    """A thread as the thread/* methods answer with it: ids, preview, status, source, turns."""

    id: ThreadId
    environments: list[ThreadEnvironment] | None = None
    extra: JsonObj | None = None
    session_id: str
    forked_from_id: str | None = None
    attached_to_thread_id: str | None = None
    parent_thread_id: str | None = None
    preview: str = ""
    ephemeral: bool = False
    section: JsonObj | None = None
    section_entered_at: int | None = None
    project_id: str | None = None
    history_mode: ThreadHistoryMode = "legacy"
    model_provider: str
    model: str | None = None
    reasoning_effort: ReasoningEffort | None = None
    created_at: int
    updated_at: int
    recency_at: int | None = None
    status: ThreadStatus
    path: str | None = None
    cwd: AbsolutePath
    cli_version: str
    originator: str | None = None
    source: SessionSource = "vscode"
    can_accept_direct_input: bool | None = None
    thread_source: str | None = None
    agent_nickname: str | None = None
    agent_role: str | None = None
    git_info: GitInfo | None = None
    name: str | None = None
    daybreak_enabled: bool | None = None
    turns: list[Turn] = Field(default_factory=list)


class TurnsPage(WireModel):
    """One page of a thread's turns with the cursors to go on either way."""

    data: list[Turn]
    next_cursor: str | None = None
    backwards_cursor: str | None = None


class SelectedCapabilityRoot(WireModel):
    """A user-selected root that can expose one or more runtime capabilities."""

    id: str
    location: JsonObj


# ---- thread/start -----------------------------------------------------------------------------


class ThreadStartParams(ParamsModel):
    """Params of `thread/start`."""

    METHOD: ClassVar[str] = "thread/start"

    cwd: str | None = None
    model: str | None = None
    model_provider: str | None = None
    service_tier: str | None = None
    approval_policy: Annotated[AskForApproval | None, GRANULAR_APPROVAL] = None
    approvals_reviewer: ApprovalsReviewer | None = None
    sandbox: SandboxMode | None = None
    config: JsonObj | None = None
    base_instructions: str | None = None
    developer_instructions: str | None = None
    personality: Personality | None = None
    ephemeral: bool | None = None
    service_name: str | None = None
    session_start_source: ThreadStartSource | None = None
    thread_source: str | None = None
    # experimental
    allow_provider_model_fallback: Annotated[bool, EXPERIMENTAL] = False
    daybreak_enabled: Annotated[bool | None, EXPERIMENTAL] = None
    dynamic_tools: Annotated[list[JsonObj] | None, EXPERIMENTAL] = None
    environments: Annotated[list[TurnEnvironmentParams] | None, EXPERIMENTAL] = None
    experimental_raw_events: Annotated[bool, EXPERIMENTAL] = False
    history_mode: Annotated[ThreadHistoryMode | None, EXPERIMENTAL] = None
    mock_experimental_field: Annotated[str | None, EXPERIMENTAL] = None
    multi_agent_mode: Annotated[MultiAgentMode | None, EXPERIMENTAL] = None
    permissions: Annotated[str | None, EXPERIMENTAL] = None
    project_id: Annotated[str | None, EXPERIMENTAL] = None
    runtime_workspace_roots: Annotated[list[AbsolutePath] | None, EXPERIMENTAL] = None
    selected_capability_roots: Annotated[list[SelectedCapabilityRoot] | None, EXPERIMENTAL] = None


class ThreadStartResponse(WireModel):
    """The result of `thread/start`."""

    thread: Thread
    model: str
    model_provider: str
    service_tier: str | None = None
    disabled_plugin_ids: list[str] = Field(default_factory=list)
    cwd: AbsolutePath
    runtime_workspace_roots: list[AbsolutePath] = Field(default_factory=list)
    instruction_sources: list[str] = Field(default_factory=list)
    approval_policy: AskForApproval
    approvals_reviewer: ApprovalsReviewer
    sandbox: SandboxPolicy
    active_permission_profile: ActivePermissionProfile | None = None
    reasoning_effort: ReasoningEffort | None = None
    multi_agent_mode: MultiAgentMode = "explicitRequestOnly"


# ---- thread/resume, thread/fork ---------------------------------------------------------------


class ThreadResumeParams(ParamsModel):
    """Params of `thread/resume`."""

    METHOD: ClassVar[str] = "thread/resume"

    thread_id: ThreadId
    cwd: str | None = None
    model: str | None = None
    model_provider: str | None = None
    service_tier: str | None = None
    approval_policy: Annotated[AskForApproval | None, GRANULAR_APPROVAL] = None
    approvals_reviewer: ApprovalsReviewer | None = None
    sandbox: SandboxMode | None = None
    config: JsonObj | None = None
    base_instructions: str | None = None
    developer_instructions: str | None = None
    personality: Personality | None = None
    exclude_turns: bool = False
    # experimental
    history: Annotated[list[JsonObj] | None, EXPERIMENTAL] = None
    initial_turns_page: Annotated[ThreadResumeInitialTurnsPageParams | None, EXPERIMENTAL] = None
    path: Annotated[str | None, EXPERIMENTAL] = None
    permissions: Annotated[str | None, EXPERIMENTAL] = None
    runtime_workspace_roots: Annotated[list[AbsolutePath] | None, EXPERIMENTAL] = None


class ThreadResumeResponse(WireModel):
    """The result of `thread/resume`."""

    thread: Thread
    model: str
    model_provider: str
    service_tier: str | None = None
    disabled_plugin_ids: list[str] = Field(default_factory=list)
    cwd: AbsolutePath
    runtime_workspace_roots: list[AbsolutePath] = Field(default_factory=list)
    instruction_sources: list[str] = Field(default_factory=list)
    approval_policy: AskForApproval
    approvals_reviewer: ApprovalsReviewer
    sandbox: SandboxPolicy
    active_permission_profile: ActivePermissionProfile | None = None
    reasoning_effort: ReasoningEffort | None = None
    collaboration_mode: CollaborationMode | None = None
    multi_agent_mode: MultiAgentMode = "explicitRequestOnly"
    initial_turns_page: TurnsPage | None = None
    turns_backwards_cursor: str | None = None
    items_backwards_cursor: str | None = None


class ThreadForkParams(ParamsModel):
    """Params of `thread/fork`."""

    METHOD: ClassVar[str] = "thread/fork"

    thread_id: ThreadId
    ephemeral: bool = False
    exclude_turns: bool = False
    last_turn_id: str | None = None
    cwd: str | None = None
    model: str | None = None
    model_provider: str | None = None
    service_tier: str | None = None
    approval_policy: Annotated[AskForApproval | None, GRANULAR_APPROVAL] = None
    approvals_reviewer: ApprovalsReviewer | None = None
    sandbox: SandboxMode | None = None
    config: JsonObj | None = None
    base_instructions: str | None = None
    developer_instructions: str | None = None
    thread_source: str | None = None
    # experimental
    attach_to_source: Annotated[bool, EXPERIMENTAL] = False
    before_turn_id: Annotated[str | None, EXPERIMENTAL] = None
    defer_goal_continuation: Annotated[bool, EXPERIMENTAL] = False
    experimental_disable_prediction_mcp: Annotated[bool, EXPERIMENTAL] = False
    experimental_prediction_mode: Annotated[bool, EXPERIMENTAL] = False
    path: Annotated[str | None, EXPERIMENTAL] = None
    permissions: Annotated[str | None, EXPERIMENTAL] = None
    runtime_workspace_roots: Annotated[list[AbsolutePath] | None, EXPERIMENTAL] = None


class ThreadForkResponse(ThreadStartResponse):
    """The result of `thread/fork`."""

    pass


# ---- listing and reading ----------------------------------------------------------------------


class ThreadListParams(ParamsModel):
    """Params of `thread/list`."""

    METHOD: ClassVar[str] = "thread/list"

    cursor: str | None = None
    limit: OptionalU32 = None
    sort_key: ThreadSortKey | None = None
    sort_direction: SortDirection | None = None
    archived: bool | None = None
    cwd: str | list[str] | None = None
    search_term: str | None = None
    section_id: str | None = None
    model_providers: list[str] | None = None
    source_kinds: list[ThreadSourceKind] | None = None
    originators: list[str] | None = None
    excluded_thread_ids: list[str] | None = None
    current_account_only: bool = False
    use_state_db_only: bool = False
    # experimental
    ancestor_thread_id: Annotated[str | None, EXPERIMENTAL] = None
    attached_to_thread_id: Annotated[str | None, EXPERIMENTAL] = None
    include_attached_threads: Annotated[bool, EXPERIMENTAL] = False
    parent_thread_id: Annotated[str | None, EXPERIMENTAL] = None
    project_id: Annotated[str | None, EXPERIMENTAL] = None


class ThreadListResponse(WireModel):
    """The result of `thread/list`."""

    data: list[Thread]
    read_states: dict[str, ThreadReadState] | None = None
    next_cursor: str | None = None
    backwards_cursor: str | None = None


class ThreadReadParams(ParamsModel):
    """Params of `thread/read`."""

    METHOD: ClassVar[str] = "thread/read"

    thread_id: ThreadId
    include_turns: bool = False


class ThreadReadResponse(WireModel):
    """The result of `thread/read`."""

    thread: Thread
    read_state: ThreadReadState | None = None


class ThreadLoadedListParams(ParamsModel):
    """Params of `thread/loaded/list`."""

    METHOD: ClassVar[str] = "thread/loaded/list"

    cursor: str | None = None
    limit: OptionalU32 = None


class ThreadLoadedListResponse(WireModel):
    """The result of `thread/loaded/list`."""

    data: list[ThreadId]
    next_cursor: str | None = None


class ThreadTurnsListParams(ParamsModel):
    """Params of `thread/turns/list`."""

    METHOD: ClassVar[str] = "thread/turns/list"

    thread_id: ThreadId
    cursor: str | None = None
    limit: OptionalU32 = None
    sort_direction: SortDirection | None = None
    items_view: TurnItemsView | None = None


class ThreadTurnsListResponse(WireModel):
    """The result of `thread/turns/list`."""

    data: list[Turn]
    next_cursor: str | None = None
    backwards_cursor: str | None = None


# ---- simple thread commands -------------------------------------------------------------------


class ThreadArchiveParams(ParamsModel):
    """Params of `thread/archive`."""

    METHOD: ClassVar[str] = "thread/archive"

    thread_id: ThreadId


class ThreadArchiveResponse(EmptyObject):
    """The result of `thread/archive`."""

    pass


class ThreadUnarchiveParams(ParamsModel):
    """Params of `thread/unarchive`."""

    METHOD: ClassVar[str] = "thread/unarchive"

    thread_id: ThreadId


class ThreadUnarchiveResponse(WireModel):
    """The result of `thread/unarchive`."""

    thread: Thread


class ThreadSetNameParams(ParamsModel):
    """Params of `thread/name/set`."""

    METHOD: ClassVar[str] = "thread/name/set"

    thread_id: ThreadId
    name: str


class ThreadSetNameResponse(EmptyObject):
    """The result of `thread/name/set`."""

    pass


class ThreadUnsubscribeParams(ParamsModel):
    """Params of `thread/unsubscribe`."""

    METHOD: ClassVar[str] = "thread/unsubscribe"

    thread_id: ThreadId


class ThreadUnsubscribeResponse(WireModel):
    """The result of `thread/unsubscribe`."""

    status: Literal["notLoaded", "notSubscribed", "unsubscribed"]
