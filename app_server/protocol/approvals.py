"""Server -> client approval requests and the client's answers.

`item/commandExecution/requestApproval` and `item/fileChange/requestApproval`: params (server side,
Codex key order and omission rules) and responses (client side, validated when the answer arrives).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Annotated, Literal, TypeAlias

from pydantic import Field

from pycodex.json_types import JsonObj

from .base import OMIT_IF_NONE, OmittingWireModel, WireModel
from .common import ItemId, ThreadId, TurnId
from .items import CommandAction

CommandExecutionApprovalKind = Literal["command", "writeStdin", "humanCommand"]
NetworkApprovalProtocol = Literal["http", "https", "socks5Tcp", "socks5Udp"]
NetworkPolicyRuleAction = Literal["allow", "deny"]
SimpleApprovalDecision = Literal["accept", "acceptForSession", "decline", "cancel"]


class NetworkApprovalContext(WireModel):
    """The network access a command asks approval for: host and protocol."""

    host: str
    protocol: NetworkApprovalProtocol


class NetworkPolicyAmendment(WireModel):
    """A network rule to remember with an approval: host and allow or deny."""

    host: str
    action: NetworkPolicyRuleAction


class ExecpolicyAmendmentBody(WireModel):
    """`{execpolicy_amendment: [...]}`: the command prefix to allow from now on."""

    execpolicy_amendment: list[str] = Field(alias="execpolicy_amendment")


class AcceptWithExecpolicyAmendment(WireModel):
    """`{"acceptWithExecpolicyAmendment": {"execpolicy_amendment": [...]}}` (inner key snake_case)."""

    accept_with_execpolicy_amendment: ExecpolicyAmendmentBody


class NetworkPolicyAmendmentBody(WireModel):
    """`{network_policy_amendment: {...}}`: the network rule to add."""

    network_policy_amendment: NetworkPolicyAmendment = Field(alias="network_policy_amendment")


class ApplyNetworkPolicyAmendment(WireModel):
    """The approval decision `{applyNetworkPolicyAmendment: {...}}`: accept and remember a network rule."""

    apply_network_policy_amendment: NetworkPolicyAmendmentBody


CommandExecutionApprovalDecision: TypeAlias = Annotated[
    SimpleApprovalDecision | AcceptWithExecpolicyAmendment | ApplyNetworkPolicyAmendment,
    Field(union_mode="left_to_right"),
]
FileChangeApprovalDecision: TypeAlias = SimpleApprovalDecision


class AdditionalFileSystemPermissions(WireModel):
    """File-system access a command asks for beyond the sandbox's (Codex's partial overlay)."""

    entries: list[JsonObj] | None = None
    glob_scan_max_depth: int | None = Field(default=None, ge=1)
    read: list[str] | None = None
    write: list[str] | None = None


class AdditionalNetworkPermissions(WireModel):
    """Network access a command asks for beyond the sandbox's."""

    enabled: bool | None = None


class AdditionalPermissionProfile(WireModel):
    """The extra permissions of one command approval (pycodex's commands never ask for any yet)."""

    file_system: AdditionalFileSystemPermissions | None = None
    network: AdditionalNetworkPermissions | None = None


class CommandExecutionRequestApprovalParams(OmittingWireModel):
    """Unset optional keys are left out (Codex sends no `reason` key when there is none)."""

    kind: CommandExecutionApprovalKind = "command"
    thread_id: ThreadId
    turn_id: TurnId
    item_id: ItemId
    started_at_ms: int
    environment_id: str | None = None
    approval_id: Annotated[str | None, OMIT_IF_NONE] = None
    reason: Annotated[str | None, OMIT_IF_NONE] = None
    network_approval_context: Annotated[NetworkApprovalContext | None, OMIT_IF_NONE] = None
    command: Annotated[str | None, OMIT_IF_NONE] = None
    cwd: Annotated[str | None, OMIT_IF_NONE] = None
    command_actions: Annotated[list[CommandAction] | None, OMIT_IF_NONE] = None
    additional_permissions: Annotated[AdditionalPermissionProfile | None, OMIT_IF_NONE] = None
    proposed_execpolicy_amendment: Annotated[list[str] | None, OMIT_IF_NONE] = None
    proposed_network_policy_amendments: Annotated[list[NetworkPolicyAmendment] | None, OMIT_IF_NONE] = None
    available_decisions: Annotated[list[CommandExecutionApprovalDecision] | None, OMIT_IF_NONE] = None


class CommandExecutionRequestApprovalResponse(WireModel):
    """The client's answer to the `item/commandExecution/requestApproval` server request."""

    decision: CommandExecutionApprovalDecision


class FileChangeRequestApprovalParams(WireModel):
    """Codex sends `reason` and `grantRoot` as explicit nulls here."""

    thread_id: ThreadId
    turn_id: TurnId
    item_id: ItemId
    started_at_ms: int
    reason: str | None = None
    grant_root: str | None = None


class FileChangeRequestApprovalResponse(WireModel):
    """The client's answer to the `item/fileChange/requestApproval` server request."""

    decision: FileChangeApprovalDecision


class ToolRequestUserInputOption(WireModel):
    """EXPERIMENTAL. One selectable option of a request_user_input question."""

    label: str
    description: str


class ToolRequestUserInputQuestion(WireModel):
    """EXPERIMENTAL. One request_user_input question and its options (Codex sets ``isOther`` on each)."""

    id: str
    header: str
    question: str
    is_other: bool = False
    is_secret: bool = False
    options: list[ToolRequestUserInputOption] | None = None


class ToolRequestUserInputParams(WireModel):
    """EXPERIMENTAL. The params of ``item/tool/requestUserInput``: the model's questions for the user."""

    thread_id: ThreadId
    turn_id: TurnId
    item_id: ItemId
    questions: list[ToolRequestUserInputQuestion]
    is_blocking: bool
    #: Deprecated in Codex (``isBlocking`` decides); sent as null.
    auto_resolution_ms: int | None = None


class ToolRequestUserInputAnswer(WireModel):
    """EXPERIMENTAL. The user's answers to one question."""

    answers: list[str]


class ToolRequestUserInputResponse(WireModel):
    """EXPERIMENTAL. The client's answer to ``item/tool/requestUserInput``: answers by question id."""

    answers: dict[str, ToolRequestUserInputAnswer]


SERVER_REQUESTS: MappingProxyType[str, tuple[type[WireModel], type[WireModel]]] = MappingProxyType(
    {
        "item/commandExecution/requestApproval": (
            CommandExecutionRequestApprovalParams,
            CommandExecutionRequestApprovalResponse,
        ),
        "item/fileChange/requestApproval": (
            FileChangeRequestApprovalParams,
            FileChangeRequestApprovalResponse,
        ),
        "item/tool/requestUserInput": (ToolRequestUserInputParams, ToolRequestUserInputResponse),
    }
)
