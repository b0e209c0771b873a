"""The response model of every served client request: ``RESPONSE_MODELS[method]`` -> a ``WireModel`` class.

A handler that builds its answer as a plain dict turns it into the model with
``RESPONSE_MODELS[method].model_validate(result)``, and ``to_wire`` of that model gives back the same dict (the
test ``tests/app_server/test_response_models.py`` holds every model to that and to Codex 0.169's response
schema). Methods whose result is ``{}`` share ``EmptyObject``, as the hand-written declarations already did.

The table names each model by module and class and imports a module when one of its models is first looked
up: building the whole protocol surface costs most of a second, and start-up needs few of them (see the
package docstring).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from importlib import import_module
from types import MappingProxyType

from .base import WireModel

__all__ = ["RESPONSE_MODELS", "ResponseModels"]

#: method -> (module under app_server.protocol, class name), in method order.
_WHERE: Mapping[str, tuple[str, str]] = MappingProxyType({
    "account/bedrock/checkGovCloudRequirements": ("responses_accounts", "BedrockCheckGovCloudRequirementsResponse"),
    "account/bedrock/discover": ("responses_accounts", "BedrockDiscoverResponse"),
    "account/bedrock/setup": ("responses_accounts", "BedrockSetupResponse"),
    "account/gatewayOAuth/cancel": ("responses_accounts", "GatewayOAuthCancelResponse"),
    "account/gatewayOAuth/login": ("responses_accounts", "GatewayOAuthLoginResponse"),
    "account/gatewayOAuth/read": ("responses_accounts", "GatewayOAuthReadResponse"),
    "account/gcp/setup": ("responses_accounts", "GcpSetupResponse"),
    "account/login/cancel": ("responses_accounts", "CancelLoginAccountResponse"),
    "account/login/start": ("responses_accounts", "LoginAccountResponse"),
    "account/logout": ("responses_accounts", "LogoutAccountResponse"),
    "account/rateLimitResetCredit/consume": ("responses_accounts", "ConsumeAccountRateLimitResetCreditResponse"),
    "account/rateLimits/read": ("responses_accounts", "GetAccountRateLimitsResponse"),
    "account/read": ("server_info", "GetAccountResponse"),
    "account/securitySetup/read": ("responses_accounts", "GetAccountSecuritySetupResponse"),
    "account/sendAddCreditsNudgeEmail": ("responses_accounts", "SendAddCreditsNudgeEmailResponse"),
    "account/usage/read": ("responses_accounts", "GetAccountTokenUsageResponse"),
    "account/workspaceMessages/read": ("responses_accounts", "GetWorkspaceMessagesResponse"),
    "accountSession/list": ("responses_accounts", "AccountSessionsResponse"),
    "accountSession/switch": ("responses_accounts", "AccountSessionsSwitchResponse"),
    "app/installed": ("responses_plugins", "AppsInstalledResponse"),
    "app/list": ("responses_plugins", "AppsListResponse"),
    "app/read": ("responses_plugins", "AppsReadResponse"),
    "collaborationMode/list": ("responses_misc", "CollaborationModeListResponse"),
    "command/exec": ("responses_fs", "CommandExecResponse"),
    "command/exec/resize": ("responses_fs", "CommandExecResizeResponse"),
    "command/exec/terminate": ("responses_fs", "CommandExecTerminateResponse"),
    "command/exec/write": ("responses_fs", "CommandExecWriteResponse"),
    "config/batchWrite": ("responses_config", "ConfigWriteResponse"),
    "config/mcpServer/reload": ("responses_config", "McpServerRefreshResponse"),
    "config/read": ("server_info", "ConfigReadResponse"),
    "config/value/write": ("responses_config", "ConfigWriteResponse"),
    "configRequirements/read": ("responses_config", "ConfigRequirementsReadResponse"),
    "environment/add": ("responses_config", "EnvironmentAddResponse"),
    "environment/info": ("responses_config", "EnvironmentInfoResponse"),
    "environment/status": ("responses_config", "EnvironmentStatusResponse"),
    "experimentalFeature/enablement/set": ("responses_misc", "ExperimentalFeatureEnablementSetResponse"),
    "experimentalFeature/list": ("responses_misc", "ExperimentalFeatureListResponse"),
    "externalAgentConfig/detect": ("responses_misc", "ExternalAgentConfigDetectResponse"),
    "externalAgentConfig/import": ("responses_misc", "ExternalAgentConfigImportResponse"),
    "externalAgentConfig/import/readHistories": ("responses_misc", "ExternalAgentConfigImportHistoriesReadResponse"),
    "externalAgentConfig/import/recordHistory": ("responses_misc", "ExternalAgentConfigImportHistoryRecordResponse"),
    "feedback/save": ("responses_misc", "FeedbackSaveResponse"),
    "feedback/upload": ("responses_misc", "FeedbackUploadResponse"),
    "fs/copy": ("responses_fs", "FsCopyResponse"),
    "fs/createDirectory": ("responses_fs", "FsCreateDirectoryResponse"),
    "fs/getMetadata": ("responses_fs", "FsGetMetadataResponse"),
    "fs/readDirectory": ("responses_fs", "FsReadDirectoryResponse"),
    "fs/readFile": ("responses_fs", "FsReadFileResponse"),
    "fs/remove": ("responses_fs", "FsRemoveResponse"),
    "fs/unwatch": ("responses_fs", "FsUnwatchResponse"),
    "fs/watch": ("responses_fs", "FsWatchResponse"),
    "fs/writeFile": ("responses_fs", "FsWriteFileResponse"),
    "fuzzyFileSearch": ("responses_fs", "FuzzyFileSearchResponse"),
    "fuzzyFileSearch/sessionStart": ("responses_fs", "FuzzyFileSearchSessionStartResponse"),
    "fuzzyFileSearch/sessionStop": ("responses_fs", "FuzzyFileSearchSessionStopResponse"),
    "fuzzyFileSearch/sessionUpdate": ("responses_fs", "FuzzyFileSearchSessionUpdateResponse"),
    "hooks/list": ("responses_config", "HooksListResponse"),
    "initialize": ("initialize", "InitializeResponse"),
    "marketplace/add": ("responses_plugins", "MarketplaceAddResponse"),
    "marketplace/remove": ("responses_plugins", "MarketplaceRemoveResponse"),
    "marketplace/upgrade": ("responses_plugins", "MarketplaceUpgradeResponse"),
    "mcpServer/event/stream/start": ("responses_config", "McpServerEventStreamStartResponse"),
    "mcpServer/event/stream/stop": ("responses_config", "McpServerEventStreamStopResponse"),
    "mcpServer/oauth/login": ("responses_config", "McpServerOauthLoginResponse"),
    "mcpServer/resource/read": ("responses_config", "McpResourceReadResponse"),
    "mcpServer/tool/call": ("responses_config", "McpServerToolCallResponse"),
    "mcpServerStatus/list": ("responses_config", "ListMcpServerStatusResponse"),
    "memory/reset": ("base", "EmptyObject"),
    "memory/status": ("responses_threads", "MemoryStatusResponse"),
    "mock/experimentalMethod": ("responses_misc", "MockExperimentalMethodResponse"),
    "model/list": ("server_info", "ModelListResponse"),
    "modelProvider/capabilities/read": ("responses_config", "ModelProviderCapabilitiesReadResponse"),
    "modelProvider/config/write": ("responses_config", "ModelProviderConfigWriteResponse"),
    "modelProvider/default/set": ("responses_config", "ConfigWriteResponse"),
    "modelProvider/list": ("responses_config", "ModelProviderListResponse"),
    "permissionProfile/list": ("responses_misc", "PermissionProfileListResponse"),
    "plugin/install": ("responses_plugins", "PluginInstallResponse"),
    "plugin/installed": ("responses_plugins", "PluginInstalledResponse"),
    "plugin/list": ("responses_plugins", "PluginListResponse"),
    "plugin/read": ("responses_plugins", "PluginReadResponse"),
    "plugin/reconcile": ("responses_plugins", "PluginReconcileResponse"),
    "plugin/search": ("responses_plugins", "PluginSearchResponse"),
    "plugin/share/checkout": ("responses_plugins", "PluginShareCheckoutResponse"),
    "plugin/share/delete": ("responses_plugins", "PluginShareDeleteResponse"),
    "plugin/share/list": ("responses_plugins", "PluginShareListResponse"),
    "plugin/share/save": ("responses_plugins", "PluginShareSaveResponse"),
    "plugin/share/updateTargets": ("responses_plugins", "PluginShareUpdateTargetsResponse"),
    "plugin/skill/read": ("responses_plugins", "PluginSkillReadResponse"),
    "plugin/uninstall": ("responses_plugins", "PluginUninstallResponse"),
    "process/kill": ("responses_fs", "ProcessKillResponse"),
    "process/resizePty": ("responses_fs", "ProcessResizePtyResponse"),
    "process/spawn": ("responses_fs", "ProcessSpawnResponse"),
    "process/writeStdin": ("responses_fs", "ProcessWriteStdinResponse"),
    "remoteControl/client/list": ("responses_misc", "RemoteControlClientsListResponse"),
    "remoteControl/client/revoke": ("responses_misc", "RemoteControlClientsRevokeResponse"),
    "remoteControl/disable": ("responses_misc", "RemoteControlDisableResponse"),
    "remoteControl/enable": ("responses_misc", "RemoteControlEnableResponse"),
    "remoteControl/pairing/start": ("responses_misc", "RemoteControlPairingStartResponse"),
    "remoteControl/pairing/status": ("responses_misc", "RemoteControlPairingStatusResponse"),
    "remoteControl/status/read": ("responses_misc", "RemoteControlStatusReadResponse"),
    "review/start": ("responses_threads", "ReviewStartResponse"),
    "server/diagnostics": ("responses_misc", "ServerDiagnosticsResponse"),
    "skills/config/write": ("responses_plugins", "SkillsConfigWriteResponse"),
    "skills/extraRoots/set": ("responses_plugins", "SkillsExtraRootsSetResponse"),
    "skills/list": ("server_info", "SkillsListResponse"),
    "thread/approveGuardianDeniedAction": ("base", "EmptyObject"),
    "thread/archive": ("threads", "ThreadArchiveResponse"),
    "thread/attachment/add": ("responses_threads", "ThreadAttachmentAddResponse"),
    "thread/attachment/list": ("responses_threads", "ThreadAttachmentListResponse"),
    "thread/attachment/remove": ("base", "EmptyObject"),
    "thread/attachmentOwner/list": ("responses_threads", "ThreadAttachmentOwnerListResponse"),
    "thread/backgroundTerminals/clean": ("base", "EmptyObject"),
    "thread/backgroundTerminals/list": ("thread_history", "BackgroundTerminalsListResponse"),
    "thread/backgroundTerminals/terminate": ("thread_history", "BackgroundTerminalsTerminateResponse"),
    "thread/compact/start": ("base", "EmptyObject"),
    "thread/decrement_elicitation": ("thread_controls", "ThreadElicitationResponse"),
    "thread/delete": ("base", "EmptyObject"),
    "thread/fork": ("threads", "ThreadForkResponse"),
    "thread/goal/clear": ("thread_history", "ThreadGoalClearResponse"),
    "thread/goal/get": ("thread_history", "ThreadGoalGetResponse"),
    "thread/goal/set": ("thread_history", "ThreadGoalSetResponse"),
    "thread/guardianReview": ("thread_controls", "ThreadGuardianReviewResponse"),
    "thread/increment_elicitation": ("thread_controls", "ThreadElicitationResponse"),
    "thread/inject_items": ("base", "EmptyObject"),
    "thread/items/list": ("thread_history", "ThreadItemsListResponse"),
    "thread/items/read": ("thread_history", "ThreadItemsReadResponse"),
    "thread/list": ("threads", "ThreadListResponse"),
    "thread/loaded/list": ("threads", "ThreadLoadedListResponse"),
    "thread/memory/read": ("responses_threads", "ThreadMemoryReadResponse"),
    "thread/memoryMode/set": ("base", "EmptyObject"),
    "thread/metadata/update": ("thread_sections", "ThreadMetadataUpdateResponse"),
    "thread/name/set": ("threads", "ThreadSetNameResponse"),
    "thread/prediction/request": ("base", "EmptyObject"),
    "thread/queue/add": ("responses_threads", "ThreadQueueAddResponse"),
    "thread/queue/delete": ("responses_threads", "ThreadQueueDeleteResponse"),
    "thread/queue/list": ("responses_threads", "ThreadQueueListResponse"),
    "thread/queue/reorder": ("base", "EmptyObject"),
    "thread/queue/start": ("responses_threads", "ThreadQueueStartResponse"),
    "thread/queue/update": ("responses_threads", "ThreadQueueUpdateResponse"),
    "thread/read": ("threads", "ThreadReadResponse"),
    "thread/readState/update": ("thread_history", "ThreadReadStateUpdateResponse"),
    "thread/realtime/listVoices": ("thread_controls", "ThreadRealtimeListVoicesResponse"),
    "thread/resume": ("threads", "ThreadResumeResponse"),
    "thread/revert": ("responses_threads", "ThreadRevertResponse"),
    "thread/sample/cancel": ("base", "EmptyObject"),
    "thread/search": ("responses_threads", "ThreadSearchResponse"),
    "thread/search/cancel": ("base", "EmptyObject"),
    "thread/search/stream": ("responses_threads", "ThreadSearchResponse"),
    "thread/search/stream/cancel": ("base", "EmptyObject"),
    "thread/searchOccurrences": ("responses_threads", "ThreadSearchOccurrencesResponse"),
    "thread/section/move": ("base", "EmptyObject"),
    "thread/settings/update": ("base", "EmptyObject"),
    "thread/shellCommand": ("base", "EmptyObject"),
    "thread/start": ("threads", "ThreadStartResponse"),
    "thread/turns/list": ("threads", "ThreadTurnsListResponse"),
    "thread/unarchive": ("threads", "ThreadUnarchiveResponse"),
    "thread/unsubscribe": ("threads", "ThreadUnsubscribeResponse"),
    "threadSection/create": ("thread_sections", "ThreadSectionResponse"),
    "threadSection/delete": ("base", "EmptyObject"),
    "threadSection/list": ("thread_sections", "ThreadSectionListResponse"),
    "threadSection/update": ("thread_sections", "ThreadSectionResponse"),
    "turn/interrupt": ("turns", "TurnInterruptResponse"),
    "turn/start": ("turns", "TurnStartResponse"),
    "turn/steer": ("turns", "TurnSteerResponse"),
    "userVerification/cancel": ("responses_misc", "UserVerificationCancelResponse"),
    "userVerification/delete": ("responses_misc", "UserVerificationDeleteResponse"),
    "userVerification/enroll": ("responses_misc", "UserVerificationEnrollResponse"),
    "userVerification/status": ("responses_misc", "UserVerificationStatusResponse"),
    "userVerification/verify": ("responses_misc", "UserVerificationVerifyResponse"),
    "windowsSandbox/readiness": ("responses_misc", "WindowsSandboxReadinessResponse"),
    "windowsSandbox/setupStart": ("responses_misc", "WindowsSandboxSetupStartResponse"),
})


class ResponseModels(Mapping[str, type[WireModel]]):
    """A read-only mapping from method name to response model that imports each model's module on first use."""

    def __init__(self, where: Mapping[str, tuple[str, str]]) -> None:
        """Build the table from ``method -> (module, class name)``."""
        self._where = where
        self._loaded: dict[str, type[WireModel]] = {}

    def __getitem__(self, method: str) -> type[WireModel]:
        """The response model of ``method`` (KeyError for a method pycodex does not serve)."""
        found = self._loaded.get(method)
        if found is None:
            module, name = self._where[method]
            model = getattr(import_module(f"{__package__}.{module}"), name)
            if not (isinstance(model, type) and issubclass(model, WireModel)):
                raise TypeError(f"{module}.{name} (the response of {method}) is not a WireModel")
            found = self._loaded[method] = model
        return found

    def __iter__(self) -> Iterator[str]:
        """The method names, without importing any model."""
        return iter(self._where)

    def __len__(self) -> int:
        """How many methods have a response model."""
        return len(self._where)

    def __contains__(self, method: object) -> bool:
        """Whether ``method`` has a response model, without importing it."""
        return method in self._where


#: Every served client request's response model, keyed by method name.
RESPONSE_MODELS: Mapping[str, type[WireModel]] = ResponseModels(_WHERE)
