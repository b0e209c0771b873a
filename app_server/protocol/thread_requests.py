"""Params of thread methods whose models were first written beside their handlers.

thread/settings/update, thread/compact/start, thread/shellCommand, thread/revert, memory/status, the
thread/queue/* and thread/attachment* families and review/start. Here, with the other protocol models, so that
describing them (the schema export) imports no handler.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from .base import ParamsModel, WireModel
from .common import (
    ApprovalsReviewer,
    AskForApproval,
    CollaborationMode,
    MultiAgentMode,
    OptionalU32,
    ReasoningEffort,
    ReasoningSummary,
    SandboxPolicy,
    ThreadId,
)
from .items import UserInput
from .turns import GRANULAR_APPROVAL

__all__ = [
    "BaseBranch",
    "Commit",
    "Custom",
    "MemoryStatusParams",
    "ReviewStartParams",
    "ReviewTarget",
    "ThreadAttachmentAddParams",
    "ThreadAttachmentListParams",
    "ThreadAttachmentOwnerListParams",
    "ThreadAttachmentRemoveParams",
    "ThreadCompactStartParams",
    "ThreadQueueAddParams",
    "ThreadQueueDeleteParams",
    "ThreadQueueListParams",
    "ThreadQueueReorderParams",
    "ThreadQueueStartParams",
    "ThreadQueueUpdateParams",
    "ThreadRevertParams",
    "ThreadSettingsUpdateParams",
    "ThreadShellCommandParams",
    "UncommittedChanges",
]


# -- thread memory ---------------------------------------------------------------------------------------

class MemoryStatusParams(ParamsModel):
    """Params of ``memory/status`` (experimental): the memory consolidation status."""

    METHOD: ClassVar[str] = "memory/status"

    min_consolidated_threads: OptionalU32 = None


# -- thread compact --------------------------------------------------------------------------------------

class ThreadCompactStartParams(ParamsModel):
    """Params of ``thread/compact/start``: compact a thread's history now."""

    METHOD: ClassVar[str] = "thread/compact/start"

    thread_id: ThreadId


# -- thread shell ----------------------------------------------------------------------------------------

class ThreadShellCommandParams(ParamsModel):
    """Params of ``thread/shellCommand``: a user shell command run in the thread (a ``userShell`` item)."""

    METHOD: ClassVar[str] = "thread/shellCommand"

    thread_id: ThreadId
    command: str
    timeout_ms: int | None = None


# -- thread settings -------------------------------------------------------------------------------------

class ThreadSettingsUpdateParams(ParamsModel):
    """Params of ``thread/settings/update`` (experimental): a thread's new sticky settings."""

    METHOD: ClassVar[str] = "thread/settings/update"

    thread_id: ThreadId
    cwd: str | None = None
    approval_policy: Annotated[AskForApproval | None, GRANULAR_APPROVAL] = None
    approvals_reviewer: ApprovalsReviewer | None = None
    sandbox_policy: SandboxPolicy | None = None
    model: str | None = None
    service_tier: str | None = None
    effort: ReasoningEffort | None = None
    summary: ReasoningSummary | None = None
    collaboration_mode: CollaborationMode | None = None
    disabled_plugin_ids: list[str] | None = None
    environments: list[Any] | None = None
    multi_agent_mode: MultiAgentMode | None = None
    permissions: str | None = None
    personality: str | None = None


# -- thread revert ---------------------------------------------------------------------------------------

class ThreadRevertParams(ParamsModel):
    """Params of ``thread/revert``: drop the turns from ``beforeTurnId`` on."""

    METHOD: ClassVar[str] = "thread/revert"

    thread_id: ThreadId
    before_turn_id: str


# -- thread queue ----------------------------------------------------------------------------------------

class ThreadQueueAddParams(ParamsModel):
    """Params of ``thread/queue/add``: queue a user message for after the running turn."""

    METHOD: ClassVar[str] = "thread/queue/add"

    thread_id: ThreadId
    client_user_message_id: str
    input: list[UserInput]
    responsesapi_client_metadata: dict[str, str] | None = None


class ThreadQueueListParams(ParamsModel):
    """Params of ``thread/queue/list``: a page of the thread's queued submissions."""

    METHOD: ClassVar[str] = "thread/queue/list"

    thread_id: ThreadId
    cursor: str | None = None
    limit: OptionalU32 = None


class ThreadQueueUpdateParams(ParamsModel):
    """Params of ``thread/queue/update``: replace a queued submission's input."""

    METHOD: ClassVar[str] = "thread/queue/update"

    thread_id: ThreadId
    queued_submission_id: str
    input: list[UserInput]
    responsesapi_client_metadata: dict[str, str] | None = None


class ThreadQueueDeleteParams(ParamsModel):
    """Params of ``thread/queue/delete``: remove one queued submission."""

    METHOD: ClassVar[str] = "thread/queue/delete"

    thread_id: ThreadId
    queued_submission_id: str


class ThreadQueueReorderParams(ParamsModel):
    """Params of ``thread/queue/reorder``: the queued submissions in their new order."""

    METHOD: ClassVar[str] = "thread/queue/reorder"

    thread_id: ThreadId
    queued_submission_ids: list[str]


class ThreadQueueStartParams(ParamsModel):
    """Params of ``thread/queue/start``: start the next (or the named) queued submission as a turn."""

    METHOD: ClassVar[str] = "thread/queue/start"

    thread_id: ThreadId
    queued_submission_id: str | None = None


# -- thread attachments ----------------------------------------------------------------------------------

class ThreadAttachmentAddParams(ParamsModel):
    """Params of ``thread/attachment/add``: attach a typed payload to a thread under an identity key."""

    METHOD: ClassVar[str] = "thread/attachment/add"

    thread_id: ThreadId
    attachment_type: str
    identity_key: str
    payload: Any = Field(...)


class ThreadAttachmentListParams(ParamsModel):
    """Params of ``thread/attachment/list``: a page of a thread's attachments."""

    METHOD: ClassVar[str] = "thread/attachment/list"

    thread_id: ThreadId
    cursor: str | None = None
    limit: OptionalU32 = None


class ThreadAttachmentRemoveParams(ParamsModel):
    """Params of ``thread/attachment/remove``: remove one attachment by type and identity key."""

    METHOD: ClassVar[str] = "thread/attachment/remove"

    thread_id: ThreadId
    attachment_type: str
    identity_key: str


class ThreadAttachmentOwnerListParams(ParamsModel):
    """Params of ``thread/attachmentOwner/list``: the threads that hold an attachment."""

    METHOD: ClassVar[str] = "thread/attachmentOwner/list"

    attachment_type: str
    identity_key: str
    archived: bool | None = None
    cursor: str | None = None
    limit: OptionalU32 = None


# -- review ----------------------------------------------------------------------------------------------

class UncommittedChanges(WireModel):
    """Review target: the working tree's uncommitted changes."""

    type: Literal["uncommittedChanges"]


class BaseBranch(WireModel):
    """Review target: the changes against a base branch."""

    type: Literal["baseBranch"]
    branch: str


class Commit(WireModel):
    """Review target: one commit."""

    type: Literal["commit"]
    sha: str
    title: str | None = None


class Custom(WireModel):
    """Review target: free-form review instructions."""

    type: Literal["custom"]
    instructions: str


ReviewTarget = Annotated[UncommittedChanges | BaseBranch | Commit | Custom, Field(discriminator="type")]


class ReviewStartParams(ParamsModel):
    """Params of ``review/start``: review a target in the thread (``inline`` only, as 0.169)."""

    METHOD: ClassVar[str] = "review/start"

    thread_id: ThreadId
    target: ReviewTarget
    delivery: Literal["inline"] | None = None  # Codex 0.169 refuses "detached" as an unknown variant
