"""Thread items: the `ThreadItem` tagged union and its parts (command actions, file changes).

Two flavours of each tagged union (the UserInput ones live in `user_input` and are re-exported here):
* strict (`UserInput`, `KnownThreadItem`): unknown `type` tags are an error that lists the variants,
  used for client input such as turn/start;
* tolerant (`StoredUserInput`, `ThreadItem`): unknown tags load as a raw-dict model that serializes
  back unchanged, used wherever we read stored or foreign data.

Note the snake_case exceptions on the wire: text input `text_elements`, fileChange kind `move_path`.
"""

# Annotations are evaluated as the classes are made (no `from __future__ import annotations`): pydantic
# would otherwise compile each string annotation again, ~15% of this module's import on the thread/start path.
import typing
from typing import Annotated, Literal, TypeAlias

from pydantic import Discriminator, Field, Tag

from pycodex.json_types import JsonObj

from .base import WireModel
from .common import AbsolutePath, ItemId
from .tool_items import McpToolCallItem, WebSearchItem
from .user_input import (
    UNKNOWN_TAG,
    USER_INPUT_VARIANTS,
    AudioUserInput,
    ByteRange,
    ImageDetail,
    ImageUserInput,
    LocalAudioUserInput,
    LocalImageUserInput,
    MentionUserInput,
    RawWireObject,
    SkillUserInput,
    StoredUserInput,
    TextElement,
    TextUserInput,
    UnknownUserInput,
    UserInput,
    tag_of,
)

# ---- pieces of items ---------------------------------------------------------------------------

MessagePhase = Literal["commentary", "partial_answer", "final_answer"]
CommandExecutionStatus = Literal["inProgress", "completed", "failed", "declined"]
CommandExecutionSource = Literal["agent", "userShell", "unifiedExecStartup", "unifiedExecInteraction"]
PatchApplyStatus = Literal["inProgress", "completed", "failed", "declined"]


class ReadCommandAction(WireModel):
    """A command that reads one file (`cat a.py`)."""

    type: Literal["read"] = "read"
    command: str
    name: str
    path: str


class ListFilesCommandAction(WireModel):
    """A command that lists files (`ls`), in `path` when it names one."""

    type: Literal["listFiles"] = "listFiles"
    command: str
    path: str | None = None


class SearchCommandAction(WireModel):
    """A command that searches (`rg foo`), for `query` in `path` when known."""

    type: Literal["search"] = "search"
    command: str
    query: str | None = None
    path: str | None = None


class UnknownCommandAction(WireModel):
    """A command Codex does not classify further; `command` is what the user or model ran."""

    type: Literal["unknown"] = "unknown"
    command: str


CommandAction: TypeAlias = Annotated[
    ReadCommandAction | ListFilesCommandAction | SearchCommandAction | UnknownCommandAction,
    Field(discriminator="type"),
]


class AddPatchChangeKind(WireModel):
    """The file is created by the patch."""

    type: Literal["add"] = "add"


class DeletePatchChangeKind(WireModel):
    """The file is deleted by the patch."""

    type: Literal["delete"] = "delete"


class UpdatePatchChangeKind(WireModel):
    """The file is changed by the patch, and moved to `move_path` when set."""

    type: Literal["update"] = "update"
    move_path: str | None = Field(default=None, alias="move_path")


PatchChangeKind: TypeAlias = Annotated[
    AddPatchChangeKind | DeletePatchChangeKind | UpdatePatchChangeKind, Field(discriminator="type")
]


class FileUpdateChange(WireModel):
    """One file of a fileChange item: its path, what happens to it and the unified diff."""

    path: str
    kind: PatchChangeKind
    diff: str


# ---- ThreadItem variants -----------------------------------------------------------------------
# Every item Codex emits ends with startedAtMs / completedAtMs (null until the item completes),
# although the published schema does not list them.


class UserMessageItem(WireModel):
    """The user's turn input, echoed as the turn's first item."""

    type: Literal["userMessage"] = "userMessage"
    id: ItemId
    client_id: str | None = None
    content: list[StoredUserInput]
    started_at_ms: int | None = None
    completed_at_ms: int | None = None


class AgentMessageItem(WireModel):
    """A message from the agent; `phase` says whether it is commentary or the final answer."""

    type: Literal["agentMessage"] = "agentMessage"
    moderation: JsonObj | None = None
    id: ItemId
    text: str
    phase: MessagePhase | None = None
    memory_citation: JsonObj | None = None
    delivery: Literal["async"] | None = None
    questions: list[JsonObj] | None = None
    started_at_ms: int | None = None
    completed_at_ms: int | None = None


class ReasoningItem(WireModel):
    """The model's reasoning: its summary parts and, when the provider sends it, the raw content."""

    type: Literal["reasoning"] = "reasoning"
    id: ItemId
    summary: list[str] = Field(default_factory=list)
    content: list[str] = Field(default_factory=list)
    started_at_ms: int | None = None
    completed_at_ms: int | None = None


class CommandExecutionItem(WireModel):
    """A shell command run for the agent or the user, with its output and exit code once it ends."""

    type: Literal["commandExecution"] = "commandExecution"
    id: ItemId
    plugin_id: str | None = None
    script_path: str | None = None
    command: str
    cwd: AbsolutePath
    process_id: str | None = None
    source: CommandExecutionSource = "agent"
    status: CommandExecutionStatus
    command_actions: list[CommandAction]
    aggregated_output: str | None = None
    exit_code: int | None = None
    duration_ms: int | None = None
    started_at_ms: int | None = None
    completed_at_ms: int | None = None


class FileChangeItem(WireModel):
    """A patch applied to files (apply_patch), with its status."""

    type: Literal["fileChange"] = "fileChange"
    id: ItemId
    changes: list[FileUpdateChange]
    status: PatchApplyStatus
    started_at_ms: int | None = None
    completed_at_ms: int | None = None


class ContextCompactionItem(WireModel):
    """The thread's model history was compacted (summarised) to fit the context window."""

    type: Literal["contextCompaction"] = "contextCompaction"
    id: ItemId
    started_at_ms: int | None = None
    completed_at_ms: int | None = None


class PlanItem(WireModel):
    """The agent's plan as text (plan mode)."""

    type: Literal["plan"] = "plan"
    id: ItemId
    text: str
    started_at_ms: int | None = None
    completed_at_ms: int | None = None


class CollabAgentState(WireModel):
    """A sub-agent's last known status as a collab item reports it (message: its answer or its error)."""

    status: Literal["pendingInit", "running", "interrupted", "completed", "errored", "shutdown", "notFound"]
    message: str | None = None


class CollabAgentToolCallItem(WireModel):
    """A call of a sub-agent tool (multi_agent_v1): who called, which agents it concerns, their states."""

    type: Literal["collabAgentToolCall"] = "collabAgentToolCall"
    id: ItemId
    tool: Literal["spawnAgent", "sendInput", "resumeAgent", "wait", "closeAgent", "sendMessage", "followupTask",
                  "interruptAgent", "listAgents"]
    status: Literal["inProgress", "completed", "failed", "interrupted"]
    sender_thread_id: str
    receiver_thread_ids: list[str]
    prompt: str | None = None
    model: str | None = None
    reasoning_effort: str | None = None
    agents_states: dict[str, CollabAgentState] = Field(default_factory=dict)
    started_at_ms: int | None = None
    completed_at_ms: int | None = None


class ImageViewItem(WireModel):
    """The agent looked at an image file."""

    type: Literal["imageView"] = "imageView"
    id: ItemId
    path: str
    started_at_ms: int | None = None
    completed_at_ms: int | None = None


class EnteredReviewModeItem(WireModel):
    """The thread entered review mode; `review` says what is reviewed."""

    type: Literal["enteredReviewMode"] = "enteredReviewMode"
    id: ItemId
    review: str
    started_at_ms: int | None = None
    completed_at_ms: int | None = None


class ExitedReviewModeItem(WireModel):
    """The thread left review mode; `review` holds the review's result."""

    type: Literal["exitedReviewMode"] = "exitedReviewMode"
    id: ItemId
    review: str
    started_at_ms: int | None = None
    completed_at_ms: int | None = None


KnownThreadItem: TypeAlias = Annotated[
    UserMessageItem
    | AgentMessageItem
    | PlanItem
    | ReasoningItem
    | CommandExecutionItem
    | FileChangeItem
    | McpToolCallItem
    | CollabAgentToolCallItem
    | WebSearchItem
    | ImageViewItem
    | EnteredReviewModeItem
    | ExitedReviewModeItem
    | ContextCompactionItem,
    Field(discriminator="type"),
]


def _variant_tags(union: object) -> tuple[str, ...]:
    """The ``type`` tags of a discriminated union's models, in the union's order."""
    members = typing.get_args(typing.get_args(union)[0])
    return tuple(str(member.model_fields["type"].default) for member in members)


# Variants we model, in the order of the Codex schema: read from the strict union, so a new variant is
# declared by its model and its line in the two unions (a test checks the tolerant one lists the same).
THREAD_ITEM_VARIANTS: tuple[str, ...] = _variant_tags(KnownThreadItem)


class UnknownThreadItem(RawWireObject):
    """A ThreadItem variant we do not model (hookPrompt, sleep, ...), kept verbatim."""

    KNOWN_TAGS = THREAD_ITEM_VARIANTS

    @property
    def id(self) -> str | None:
        """The item's id, when the raw object has a string one."""
        value = self.root.get("id")
        return value if isinstance(value, str) else None


# Every ThreadItem tag Codex 0.169.0 defines (the unmodelled ones load as UnknownThreadItem).
CODEX_THREAD_ITEM_TYPES: tuple[str, ...] = (
    "userMessage",
    "hookPrompt",
    "agentMessage",
    "functionCallOutput",
    "plan",
    "reasoning",
    "commandExecution",
    "fileChange",
    "mcpToolCall",
    "dynamicToolCall",
    "collabAgentToolCall",
    "subAgentActivity",
    "webSearch",
    "imageView",
    "sleep",
    "imageGeneration",
    "enteredReviewMode",
    "exitedReviewMode",
    "contextCompaction",
)

def _thread_item_tag(value: object) -> str:
    tag = tag_of(value)
    return tag if isinstance(tag, str) and tag in THREAD_ITEM_VARIANTS else UNKNOWN_TAG


ThreadItem: TypeAlias = Annotated[
    Annotated[UserMessageItem, Tag("userMessage")]
    | Annotated[AgentMessageItem, Tag("agentMessage")]
    | Annotated[PlanItem, Tag("plan")]
    | Annotated[ReasoningItem, Tag("reasoning")]
    | Annotated[CommandExecutionItem, Tag("commandExecution")]
    | Annotated[FileChangeItem, Tag("fileChange")]
    | Annotated[McpToolCallItem, Tag("mcpToolCall")]
    | Annotated[CollabAgentToolCallItem, Tag("collabAgentToolCall")]
    | Annotated[WebSearchItem, Tag("webSearch")]
    | Annotated[ImageViewItem, Tag("imageView")]
    | Annotated[EnteredReviewModeItem, Tag("enteredReviewMode")]
    | Annotated[ExitedReviewModeItem, Tag("exitedReviewMode")]
    | Annotated[ContextCompactionItem, Tag("contextCompaction")]
    | Annotated[UnknownThreadItem, Tag(UNKNOWN_TAG)],
    Discriminator(_thread_item_tag),
]


__all__ = [
    "CODEX_THREAD_ITEM_TYPES",
    "THREAD_ITEM_VARIANTS",
    "UNKNOWN_TAG",
    "USER_INPUT_VARIANTS",
    "AgentMessageItem",
    "AudioUserInput",
    "ByteRange",
    "CollabAgentState",
    "CollabAgentToolCallItem",
    "CommandAction",
    "CommandExecutionItem",
    "ContextCompactionItem",
    "EnteredReviewModeItem",
    "ExitedReviewModeItem",
    "FileChangeItem",
    "FileUpdateChange",
    "ImageDetail",
    "ImageUserInput",
    "ImageViewItem",
    "KnownThreadItem",
    "LocalAudioUserInput",
    "LocalImageUserInput",
    "MentionUserInput",
    "PatchChangeKind",
    "PlanItem",
    "RawWireObject",
    "ReasoningItem",
    "SkillUserInput",
    "StoredUserInput",
    "TextElement",
    "TextUserInput",
    "ThreadItem",
    "UnknownThreadItem",
    "UnknownUserInput",
    "UserInput",
    "UserMessageItem",
]
