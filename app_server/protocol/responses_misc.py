"""Responses of the remaining methods: collaboration modes, experimental features, permission profiles,
feedback, external-agent import, Windows sandbox, diagnostics, user verification, remote control.

Field names and types follow Codex 0.169's response schema; field order is the order the handlers emit
(Codex's where recorded). Built with ``Model.model_validate(handler_dict)``; ``to_wire`` gives the dict back.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from pycodex.json_types import JsonObj

from .base import OMIT_IF_NONE, OmittingWireModel, WireModel
from .common import ReasoningEffort, RemoteControlConnectionStatus

ModeKind = Literal["plan", "default"]
ExperimentalFeatureStage = Literal["beta", "underDevelopment", "stable", "deprecated", "removed"]
ExternalAgentConfigMigrationItemType = Literal["AGENTS_MD", "CONFIG", "SKILLS", "PLUGINS", "MCP_SERVER_CONFIG", "SUBAGENTS", "HOOKS", "COMMANDS", "MEMORY", "SESSIONS"]
ExternalAgentDetectedConnectorSource = Literal["remoteMcpServersConfig", "sessionToolUse"]
ExternalAgentImportedConnectorSource = Literal["remoteMcpServersConfig"]
WindowsSandboxReadiness = Literal["ready", "notConfigured", "updateRequired"]
UserVerificationUnavailableReason = Literal["credentialMissing", "biometricsUnavailable", "providerUnavailable"]


class CollaborationModeMask(WireModel):
    """EXPERIMENTAL - collaboration mode preset metadata for clients."""

    name: str
    mode: ModeKind | None = None
    model: str | None = None
    reasoning_effort: ReasoningEffort | None = Field(default=None, alias="reasoning_effort")


class CollaborationModeListResponse(WireModel):
    """EXPERIMENTAL - collaboration mode presets response. The result of `collaborationMode/list`."""

    data: list[CollaborationModeMask]


class ExperimentalFeature(WireModel):
    """One feature flag: its name, stage, texts, and whether it is on and on by default."""

    name: str
    stage: ExperimentalFeatureStage
    display_name: str | None = None
    description: str | None = None
    announcement: str | None = None
    enabled: bool
    default_enabled: bool


class ExperimentalFeatureListResponse(WireModel):
    """The result of `experimentalFeature/list`."""

    data: list[ExperimentalFeature]
    next_cursor: str | None = None


class ExperimentalFeatureEnablementSetResponse(WireModel):
    """The result of `experimentalFeature/enablement/set`."""

    enablement: dict[str, bool]


class PermissionProfileSummary(WireModel):
    """One permission profile (`:read-only`, `:workspace`, ... or a named one) and if it is allowed."""

    id: str
    description: str | None = None
    allowed: bool


class PermissionProfileListResponse(WireModel):
    """The result of `permissionProfile/list`."""

    data: list[PermissionProfileSummary]
    next_cursor: str | None = None


class FeedbackSaveResponse(WireModel):
    """The result of `feedback/save`."""

    saved_path: str
    thread_id: str
    prompt_hash: str | None = None


class FeedbackUploadResponse(WireModel):
    """The result of `feedback/upload`."""

    thread_id: str
    prompt_hash: str | None = None


class MigrationDetails(OmittingWireModel):
    """What an external-agent migration item would import, by kind."""

    commands: list[JsonObj] = Field(default_factory=list)
    hooks: list[JsonObj] = Field(default_factory=list)
    mcp_servers: list[JsonObj] = Field(default_factory=list)
    memory: Annotated[list[str] | None, OMIT_IF_NONE] = None
    plugins: list[JsonObj] = Field(default_factory=list)
    sessions: list[JsonObj] = Field(default_factory=list)
    skills: list[JsonObj] = Field(default_factory=list)
    subagents: list[JsonObj] = Field(default_factory=list)


class ExternalAgentConfigMigrationItem(WireModel):
    """One thing `externalAgentConfig/detect` found to import from another agent's config."""

    cwd: str | None = None
    description: str
    details: MigrationDetails | None = None
    item_type: ExternalAgentConfigMigrationItemType


class ExternalAgentDetectedConnectorCandidate(WireModel):
    """A connector another agent used that could be imported, with how often it was used."""

    name: str
    session_count: int
    source: ExternalAgentDetectedConnectorSource


class ExternalAgentConfigDetectResponse(WireModel):
    """The result of `externalAgentConfig/detect`."""

    items: list[ExternalAgentConfigMigrationItem]
    connectors: list[ExternalAgentDetectedConnectorCandidate] = Field(default_factory=list)


class ExternalAgentConfigImportResponse(WireModel):
    """The result of `externalAgentConfig/import`."""

    import_id: str


class ExternalAgentConfigImportHistoryRecordResponse(WireModel):
    """The result of `externalAgentConfig/import/recordHistory`."""

    import_id: str


class ExternalAgentConfigImportItemTypeSuccess(WireModel):
    """One kind of item an import brought over."""

    cwd: str | None = None
    item_type: ExternalAgentConfigMigrationItemType
    source: str | None = None
    target: str | None = None
    title: str | None = None


class ExternalAgentConfigImportItemTypeFailure(WireModel):
    """One kind of item an import failed on, at which stage and why."""

    cwd: str | None = None
    error_type: str | None = None
    failure_stage: str
    item_type: ExternalAgentConfigMigrationItemType
    message: str
    source: str | None = None
    sub_error_type: str | None = None


class ExternalAgentConfigImportHistory(WireModel):
    """One recorded external-agent import: when it completed, what succeeded and what failed."""

    import_id: str
    provider_id: str | None = None
    completed_at_ms: int
    successes: list[ExternalAgentConfigImportItemTypeSuccess]
    failures: list[ExternalAgentConfigImportItemTypeFailure]


class ExternalAgentImportedConnectorCandidate(WireModel):
    """A connector an import brought over."""

    name: str
    session_count: int
    source: ExternalAgentImportedConnectorSource


class ExternalAgentConfigImportHistoriesReadResponse(WireModel):
    """The result of `externalAgentConfig/import/readHistories`."""

    data: list[ExternalAgentConfigImportHistory]
    connectors: list[ExternalAgentImportedConnectorCandidate]


class WindowsSandboxSetupStartResponse(WireModel):
    """The result of `windowsSandbox/setupStart`."""

    started: bool


class WindowsSandboxReadinessResponse(WireModel):
    """The result of `windowsSandbox/readiness`."""

    status: WindowsSandboxReadiness


class ServerDiagnosticsProcess(WireModel):
    """The app-server process: its id and memory use."""

    id: int
    resident_memory_bytes: int | None = None
    physical_footprint_bytes: int | None = None


class ServerDiagnosticsGauge(WireModel):
    """One named gauge of the app-server (requests in flight, queued ...)."""

    name: str
    value: int


class ServerDiagnosticsResponse(WireModel):
    """The result of `server/diagnostics`."""

    process: ServerDiagnosticsProcess
    gauges: list[ServerDiagnosticsGauge]


class UserVerificationStatusResponse(WireModel):
    """Local readiness only; this neither prompts nor queries server registration. The result of
    `userVerification/status`.
    """

    credential_id: str | None = None
    unavailable_reason: UserVerificationUnavailableReason | None = None
    unavailable_message: str | None = None


class UserVerificationEnrollResponse(WireModel):
    """The result of `userVerification/enroll`: the public metadata of the local credential."""

    algorithm: str | None = None
    credential_id: str
    public_key: str | None = None


class UserVerificationDeleteResponse(WireModel):
    """The result of `userVerification/delete`."""


class UserVerificationProof(WireModel):
    """A signature over the exact decoded challenge. The verifier validates and consumes it."""

    credential_id: str
    signature: str


class UserVerificationVerifyResponse(WireModel):
    """The result of `userVerification/verify`."""

    proof: UserVerificationProof


class UserVerificationCancelResponse(WireModel):
    """Acknowledges the cancellation signal; native work may still be finishing. Unknown or finished requests are
    a no-op, and completed effects are not rolled back. The result of `userVerification/cancel`.
    """


class RemoteControlEnableResponse(WireModel):
    """The result of `remoteControl/enable`."""

    status: RemoteControlConnectionStatus
    server_name: str
    installation_id: str
    environment_id: str | None = None


class RemoteControlDisableResponse(WireModel):
    """The result of `remoteControl/disable`."""

    status: RemoteControlConnectionStatus
    server_name: str
    installation_id: str
    environment_id: str | None = None


class RemoteControlStatusReadResponse(WireModel):
    """The result of `remoteControl/status/read`."""

    status: RemoteControlConnectionStatus
    server_name: str
    installation_id: str
    environment_id: str | None = None


class RemoteControlPairingStartResponse(WireModel):
    """The result of `remoteControl/pairing/start`."""

    environment_id: str
    expires_at: int
    manual_pairing_code: str | None = None
    pairing_code: str


class RemoteControlPairingStatusResponse(WireModel):
    """The result of `remoteControl/pairing/status`."""

    claimed: bool


class RemoteControlClient(WireModel):
    """A device paired for remote control of this app-server."""

    app_version: str | None = None
    client_id: str
    device_model: str | None = None
    device_type: str | None = None
    display_name: str | None = None
    last_seen_at: int | None = None
    os_version: str | None = None
    platform: str | None = None


class RemoteControlClientsListResponse(WireModel):
    """The result of `remoteControl/client/list`."""

    data: list[RemoteControlClient]
    next_cursor: str | None = None


class RemoteControlClientsRevokeResponse(WireModel):
    """The result of `remoteControl/client/revoke`."""


class MockExperimentalMethodResponse(WireModel):
    """The result of `mock/experimentalMethod`."""

    echoed: str | None = None
