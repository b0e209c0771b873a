"""Every client method pycodex serves, declared once: name, handler, params, result, stability.

This table is the single source the router (routes, the lazy family index, the "unknown variant" order, which
is this table's order), the experimental gates and the schema export derive from; see
``app_server/protocol/declarations.py`` for what each field means. It holds only strings, so importing it at
start-up imports no handler and no protocol model: a method's family module is imported on its first request.

Adding a method: write its handler (and models) and add one ``MethodDecl`` line here. ``result=None`` marks
a handler that still returns a plain dict; the schema then describes its params only.
"""

from __future__ import annotations

from typing import Final

from .declarations import MethodDecl as M

__all__ = ["DECLARATIONS"]

_T = "protocol.threads"
_S = "protocol.surface"
_SEC = "protocol.thread_sections"
_H = "protocol.thread_history"
_SI = "protocol.server_info"
_SET = "protocol.settings"
_TC = "protocol.thread_controls"
_TU = "protocol.turns"
_MCP = "mcp.params"
_TR = "protocol.thread_requests"
_EXP: Final = "experimental"

DECLARATIONS: tuple[M, ...] = (
    # -- initialize ------------------------------------------------------------------------------------------
    M("initialize", "initialize:initialize",
      "protocol.initialize:InitializeParams", "protocol.initialize:InitializeResponse"),
    # -- threads ---------------------------------------------------------------------------------------------
    M("thread/start", "threads:thread_start",
      f"{_T}:ThreadStartParams", f"{_T}:ThreadStartResponse", probe=True),
    M("thread/resume", "threads:thread_resume",
      f"{_T}:ThreadResumeParams", f"{_T}:ThreadResumeResponse", probe=True),
    M("thread/fork", "threads:thread_fork", f"{_T}:ThreadForkParams", f"{_T}:ThreadForkResponse", probe=True),
    M("thread/read", "threads:thread_read", f"{_T}:ThreadReadParams", f"{_T}:ThreadReadResponse"),
    M("thread/list", "threads:thread_list",
      f"{_T}:ThreadListParams",
      f"{_T}:ThreadListResponse", probe=True, accepts="protocol.codex_0171:ThreadListParams0171"),
    M("thread/loaded/list", "threads:loaded_list",
      f"{_T}:ThreadLoadedListParams", f"{_T}:ThreadLoadedListResponse"),
    M("thread/turns/list", "threads:turns_list",
      f"{_T}:ThreadTurnsListParams", f"{_T}:ThreadTurnsListResponse"),
    M("thread/name/set", "threads:name_set", f"{_T}:ThreadSetNameParams", f"{_T}:ThreadSetNameResponse"),
    M("thread/archive", "threads:archive", f"{_T}:ThreadArchiveParams", f"{_T}:ThreadArchiveResponse"),
    M("thread/unarchive", "threads:unarchive",
      f"{_T}:ThreadUnarchiveParams", f"{_T}:ThreadUnarchiveResponse"),
    M("thread/unsubscribe", "threads:unsubscribe",
      f"{_T}:ThreadUnsubscribeParams", f"{_T}:ThreadUnsubscribeResponse"),
    # -- thread_history --------------------------------------------------------------------------------------
    M("thread/items/list", "thread_history:items_list",
      f"{_H}:ThreadItemsListParams", f"{_H}:ThreadItemsListResponse"),
    M("thread/items/read", "thread_history:items_read",
      f"{_H}:ThreadItemsReadParams", f"{_H}:ThreadItemsReadResponse", stability=_EXP),
    M("thread/readState/update", "thread_history:read_state_update",
      f"{_H}:ThreadReadStateUpdateParams", stability=_EXP),
    # -- thread_goals ----------------------------------------------------------------------------------------
    M("thread/goal/get", "thread_goals:goal_get", f"{_H}:ThreadGoalGetParams", f"{_H}:ThreadGoalGetResponse"),
    M("thread/goal/set", "thread_goals:goal_set", f"{_H}:ThreadGoalSetParams", f"{_H}:ThreadGoalSetResponse"),
    M("thread/goal/clear", "thread_goals:goal_clear",
      f"{_H}:ThreadGoalClearParams", f"{_H}:ThreadGoalClearResponse"),
    # -- thread_terminals ------------------------------------------------------------------------------------
    M("thread/backgroundTerminals/list", "thread_terminals:terminals_list",
      f"{_H}:BackgroundTerminalsListParams", f"{_H}:BackgroundTerminalsListResponse", stability=_EXP),
    M("thread/backgroundTerminals/clean", "thread_terminals:terminals_clean",
      f"{_H}:BackgroundTerminalsCleanParams", "protocol.base:EmptyObject", stability=_EXP),
    M("thread/backgroundTerminals/terminate", "thread_terminals:terminals_terminate",
      f"{_H}:BackgroundTerminalsTerminateParams",
      f"{_H}:BackgroundTerminalsTerminateResponse", stability=_EXP),
    # -- thread_sections -------------------------------------------------------------------------------------
    M("threadSection/list", "thread_sections:section_list",
      f"{_SEC}:ThreadSectionListParams", f"{_SEC}:ThreadSectionListResponse"),
    M("threadSection/create", "thread_sections:section_create",
      f"{_SEC}:ThreadSectionCreateParams", f"{_SEC}:ThreadSectionResponse"),
    M("threadSection/update", "thread_sections:section_update",
      f"{_SEC}:ThreadSectionUpdateParams", f"{_SEC}:ThreadSectionResponse"),
    M("threadSection/delete", "thread_sections:section_delete",
      f"{_SEC}:ThreadSectionDeleteParams", "protocol.base:EmptyObject"),
    M("thread/section/move", "thread_sections:section_move",
      f"{_SEC}:ThreadSectionMoveParams", "protocol.base:EmptyObject"),
    M("thread/delete", "thread_sections:thread_delete",
      f"{_SEC}:ThreadDeleteParams", "protocol.base:EmptyObject"),
    M("thread/metadata/update", "thread_sections:metadata_update",
      f"{_SEC}:ThreadMetadataUpdateParams", f"{_SEC}:ThreadMetadataUpdateResponse"),
    # -- thread_search ---------------------------------------------------------------------------------------
    M("thread/search", "thread_search:thread_search", f"{_SEC}:ThreadSearchParams", stability=_EXP),
    M("thread/searchOccurrences", "thread_search:occurrences",
      f"{_SEC}:ThreadSearchOccurrencesParams", stability=_EXP),
    M("thread/search/stream", "thread_search:thread_search_stream", f"{_SEC}:ThreadSearchParams"),
    M("thread/search/cancel", "thread_search:search_cancel",
      f"{_SEC}:ThreadSearchCancelParams", "protocol.base:EmptyObject"),
    M("thread/search/stream/cancel", "thread_search:search_cancel",
      f"{_SEC}:ThreadSearchCancelParams", "protocol.base:EmptyObject"),
    # -- thread_memory ---------------------------------------------------------------------------------------
    M("thread/memoryMode/set", "thread_memory:memory_mode_set",
      f"{_SEC}:ThreadMemoryModeSetParams", "protocol.base:EmptyObject", stability=_EXP),
    M("memory/status", "thread_memory:memory_status",
      f"{_TR}:MemoryStatusParams", stability=_EXP),
    M("memory/reset", "thread_memory:memory_reset", None, "protocol.base:EmptyObject", stability=_EXP),
    M("thread/memory/read", "thread_memory:memory_read", f"{_SEC}:ThreadMemoryReadParams", stability=_EXP),
    # -- thread_inject ---------------------------------------------------------------------------------------
    M("thread/inject_items", "thread_inject:inject_items",
      f"{_SEC}:ThreadInjectItemsParams", "protocol.base:EmptyObject"),
    # -- thread_compact --------------------------------------------------------------------------------------
    M("thread/compact/start", "thread_compact:compact_start",
      f"{_TR}:ThreadCompactStartParams", "protocol.base:EmptyObject"),
    # -- thread_shell ----------------------------------------------------------------------------------------
    M("thread/shellCommand", "thread_shell:shell_command",
      f"{_TR}:ThreadShellCommandParams", "protocol.base:EmptyObject"),
    # -- thread_settings -------------------------------------------------------------------------------------
    M("thread/settings/update", "thread_settings:settings_update",
      f"{_TR}:ThreadSettingsUpdateParams",
      "protocol.base:EmptyObject", stability=_EXP, probe=True),
    # -- thread_revert ---------------------------------------------------------------------------------------
    M("thread/revert", "thread_revert:revert", f"{_TR}:ThreadRevertParams"),
    # -- thread_queue ----------------------------------------------------------------------------------------
    M("thread/queue/add", "thread_queue:queue_add",
      f"{_TR}:ThreadQueueAddParams", stability=_EXP),
    M("thread/queue/list", "thread_queue:queue_list",
      f"{_TR}:ThreadQueueListParams", stability=_EXP),
    M("thread/queue/update", "thread_queue:queue_update",
      f"{_TR}:ThreadQueueUpdateParams", stability=_EXP),
    M("thread/queue/delete", "thread_queue:queue_delete",
      f"{_TR}:ThreadQueueDeleteParams", stability=_EXP),
    M("thread/queue/reorder", "thread_queue:queue_reorder",
      f"{_TR}:ThreadQueueReorderParams", "protocol.base:EmptyObject", stability=_EXP),
    M("thread/queue/start", "thread_queue:queue_start",
      f"{_TR}:ThreadQueueStartParams", stability=_EXP),
    # -- thread_attachments ----------------------------------------------------------------------------------
    M("thread/attachment/add", "thread_attachments:attachment_add",
      f"{_TR}:ThreadAttachmentAddParams"),
    M("thread/attachment/list", "thread_attachments:attachment_list",
      f"{_TR}:ThreadAttachmentListParams"),
    M("thread/attachmentOwner/list", "thread_attachments:attachment_owner_list",
      f"{_TR}:ThreadAttachmentOwnerListParams"),
    M("thread/attachment/remove", "thread_attachments:attachment_remove",
      f"{_TR}:ThreadAttachmentRemoveParams", "protocol.base:EmptyObject"),
    # -- thread_controls -------------------------------------------------------------------------------------
    M("thread/increment_elicitation", "thread_controls:increment_elicitation",
      f"{_TC}:ThreadElicitationParams", f"{_TC}:ThreadElicitationResponse", stability=_EXP),
    M("thread/decrement_elicitation", "thread_controls:decrement_elicitation",
      f"{_TC}:ThreadElicitationParams", f"{_TC}:ThreadElicitationResponse", stability=_EXP),
    M("thread/sample/cancel", "thread_controls:sample_cancel",
      f"{_TC}:ThreadSampleCancelParams", "protocol.base:EmptyObject", stability=_EXP),
    M("thread/prediction/request", "thread_controls:prediction_request",
      f"{_TC}:ThreadPredictionRequestParams", "protocol.base:EmptyObject", stability=_EXP),
    M("thread/realtime/listVoices", "thread_controls:realtime_list_voices",
      None, f"{_TC}:ThreadRealtimeListVoicesResponse", stability=_EXP),
    # -- thread_guardian -------------------------------------------------------------------------------------
    M("thread/guardianReview", "thread_guardian:guardian_review",
      f"{_TC}:ThreadGuardianReviewParams", f"{_TC}:ThreadGuardianReviewResponse", stability=_EXP),
    M("thread/approveGuardianDeniedAction", "thread_guardian:approve_denied_action",
      f"{_TC}:ThreadApproveGuardianDeniedActionParams", "protocol.base:EmptyObject"),
    # -- turns -----------------------------------------------------------------------------------------------
    M("turn/start", "turns:turn_start", f"{_TU}:TurnStartParams", f"{_TU}:TurnStartResponse", probe=True),
    M("turn/steer", "turns:turn_steer", f"{_TU}:TurnSteerParams", f"{_TU}:TurnSteerResponse"),
    M("turn/interrupt", "turns:turn_interrupt", f"{_TU}:TurnInterruptParams", f"{_TU}:TurnInterruptResponse"),
    # -- review ----------------------------------------------------------------------------------------------
    M("review/start", "review:review_start", f"{_TR}:ReviewStartParams"),
    # -- info ------------------------------------------------------------------------------------------------
    M("skills/list", "info:skills_list", f"{_SI}:SkillsListParams", f"{_SI}:SkillsListResponse"),
    M("account/read", "info:account_read", f"{_SI}:GetAccountParams", f"{_SI}:GetAccountResponse"),
    # -- models ----------------------------------------------------------------------------------------------
    M("model/list", "models:list_models", f"{_SI}:ModelListParams", f"{_SI}:ModelListResponse"),
    M("modelProvider/list", "models:list_providers"),
    M("modelProvider/capabilities/read", "models:read_capabilities"),
    M("modelProvider/config/write", "models:write_provider", f"{_SET}:ModelProviderConfigWriteParams"),
    M("modelProvider/default/set", "models:set_default_provider", f"{_SET}:ModelProviderDefaultSetParams"),
    # -- config ----------------------------------------------------------------------------------------------
    M("config/read", "config:config_read", f"{_SI}:ConfigReadParams", f"{_SI}:ConfigReadResponse"),
    M("config/value/write", "config:value_write", f"{_SET}:ConfigValueWriteParams"),
    M("config/batchWrite", "config:batch_write", f"{_SET}:ConfigBatchWriteParams"),
    M("configRequirements/read", "config:requirements_read"),
    # -- search ----------------------------------------------------------------------------------------------
    M("fuzzyFileSearch", "search:search", f"{_SET}:FuzzyFileSearchParams"),
    M("fuzzyFileSearch/sessionStart", "search:session_start",
      f"{_SET}:FuzzySessionStartParams", stability=_EXP),
    M("fuzzyFileSearch/sessionUpdate", "search:session_update",
      f"{_SET}:FuzzySessionUpdateParams", stability=_EXP),
    M("fuzzyFileSearch/sessionStop", "search:session_stop", f"{_SET}:FuzzySessionStopParams", stability=_EXP),
    # -- fs --------------------------------------------------------------------------------------------------
    M("fs/readFile", "fs:read_file", f"{_S}:FsPathParams"),
    M("fs/writeFile", "fs:write_file", f"{_S}:FsWriteFileParams"),
    M("fs/createDirectory", "fs:create_directory", f"{_S}:FsCreateDirectoryParams"),
    M("fs/getMetadata", "fs:get_metadata", f"{_S}:FsPathParams"),
    M("fs/readDirectory", "fs:read_directory", f"{_S}:FsPathParams"),
    M("fs/remove", "fs:remove", f"{_S}:FsRemoveParams"),
    M("fs/copy", "fs:copy", f"{_S}:FsCopyParams"),
    M("fs/watch", "fs:watch", f"{_S}:FsWatchParams"),
    M("fs/unwatch", "fs:unwatch", f"{_S}:FsUnwatchParams"),
    # -- commands --------------------------------------------------------------------------------------------
    M("command/exec", "commands:command_exec", f"{_S}:CommandExecParams"),
    M("command/exec/write", "commands:command_write", f"{_S}:CommandExecWriteParams"),
    M("command/exec/terminate", "commands:command_terminate", f"{_S}:CommandExecTerminateParams"),
    M("command/exec/resize", "commands:command_resize", f"{_S}:CommandExecResizeParams"),
    M("process/spawn", "commands:process_spawn", f"{_S}:ProcessSpawnParams", stability=_EXP),
    M("process/writeStdin", "commands:process_write", f"{_S}:ProcessWriteStdinParams", stability=_EXP),
    M("process/kill", "commands:process_kill", f"{_S}:ProcessKillParams", stability=_EXP),
    M("process/resizePty", "commands:process_resize", f"{_S}:ProcessResizePtyParams", stability=_EXP),
    # -- hooks -----------------------------------------------------------------------------------------------
    M("hooks/list", "hooks:hooks_list", f"{_S}:HooksListParams"),
    # -- plugins ---------------------------------------------------------------------------------------------
    M("skills/config/write", "plugins:skills_config_write", f"{_S}:SkillsConfigWriteParams"),
    M("skills/extraRoots/set", "plugins:extra_roots_set", f"{_S}:SkillsExtraRootsSetParams"),
    M("plugin/list", "plugins:plugin_list", f"{_S}:CwdsParams"),
    M("plugin/installed", "plugins:plugin_installed", f"{_S}:CwdsParams"),
    M("plugin/read", "plugins:plugin_read", f"{_S}:PluginReadParams"),
    M("plugin/install", "plugins:plugin_install", f"{_S}:PluginReadParams"),
    M("plugin/uninstall", "plugins:plugin_uninstall", f"{_S}:PluginUninstallParams"),
    M("plugin/reconcile", "plugins:plugin_reconcile", f"{_S}:AnyParams"),
    M("plugin/search", "plugins:plugin_search", f"{_S}:PluginSearchParams", stability=_EXP),
    M("plugin/skill/read", "plugins:plugin_skill_read", f"{_S}:PluginSkillReadParams"),
    M("plugin/share/save", "plugins:plugin_share_save", f"{_S}:PluginShareSaveParams"),
    M("plugin/share/updateTargets", "plugins:plugin_share_update_targets",
      f"{_S}:PluginShareUpdateTargetsParams"),
    M("plugin/share/list", "plugins:plugin_share_list", f"{_S}:AnyParams"),
    M("plugin/share/checkout", "plugins:plugin_share_checkout", f"{_S}:RemotePluginParams"),
    M("plugin/share/delete", "plugins:plugin_share_delete", f"{_S}:RemotePluginParams"),
    M("marketplace/add", "plugins:marketplace_add", f"{_S}:MarketplaceAddParams"),
    M("marketplace/remove", "plugins:marketplace_remove", f"{_S}:MarketplaceRemoveParams"),
    M("marketplace/upgrade", "plugins:marketplace_upgrade", f"{_S}:MarketplaceUpgradeParams"),
    M("app/list", "plugins:app_list", f"{_S}:AnyParams"),
    M("app/read", "plugins:app_read", f"{_S}:AppsReadParams"),
    M("app/installed", "plugins:app_installed", f"{_S}:AnyParams"),
    # -- accounts --------------------------------------------------------------------------------------------
    M("account/login/start", "accounts:login_start", f"{_S}:LoginParams"),
    M("account/logout", "accounts:logout"),
    M("account/login/cancel", "accounts:login_cancel", f"{_S}:CancelLoginParams"),
    M("account/gatewayOAuth/read", "accounts:gateway_read"),
    M("account/gatewayOAuth/login", "accounts:gateway_login"),
    M("account/gatewayOAuth/cancel", "accounts:empty"),
    M("account/securitySetup/read", "accounts:security_setup"),
    M("account/rateLimits/read", "accounts:account_rate_limits_read"),
    M("account/rateLimitResetCredit/consume", "accounts:account_rate_limit_reset_credit_consume",
      f"{_S}:ConsumeResetCreditParams"),
    M("account/usage/read", "accounts:account_usage_read"),
    M("account/workspaceMessages/read", "accounts:account_workspace_messages_read"),
    M("account/sendAddCreditsNudgeEmail", "accounts:account_send_add_credits_nudge_email",
      f"{_S}:NudgeEmailParams"),
    M("accountSession/list", "accounts:sessions_list", f"{_S}:AnyParams", stability=_EXP),
    M("accountSession/switch", "accounts:sessions_switch", f"{_S}:AccountSwitchParams", stability=_EXP),
    M("account/bedrock/discover", "accounts:bedrock_discover", f"{_S}:AnyParams", stability=_EXP),
    M("account/bedrock/setup", "accounts:bedrock_setup", f"{_S}:AnyParams", stability=_EXP),
    M("account/bedrock/checkGovCloudRequirements", "accounts:bedrock_govcloud",
      f"{_S}:AnyParams", stability=_EXP),
    M("account/gcp/setup", "accounts:gcp_setup", f"{_S}:GcpSetupParams", stability=_EXP),
    # -- misc ------------------------------------------------------------------------------------------------
    M("collaborationMode/list", "misc:collaboration_modes", f"{_S}:AnyParams", stability=_EXP),
    M("experimentalFeature/list", "misc:feature_list", f"{_S}:PageParams"),
    M("experimentalFeature/enablement/set", "misc:feature_enablement_set",
      f"{_S}:FeatureEnablementSetParams"),
    M("permissionProfile/list", "misc:permission_profiles", f"{_S}:PageParams"),
    M("feedback/save", "misc:feedback_save", f"{_S}:FeedbackSaveParams"),
    M("feedback/upload", "misc:feedback_upload", f"{_S}:FeedbackParams"),
    M("externalAgentConfig/detect", "misc:external_detect", f"{_S}:AnyParams"),
    M("externalAgentConfig/import", "misc:external_import", f"{_S}:ExternalImportParams"),
    M("externalAgentConfig/import/recordHistory", "misc:external_record",
      f"{_S}:ExternalRecordHistoryParams"),
    M("externalAgentConfig/import/readHistories", "misc:external_histories"),
    M("windowsSandbox/setupStart", "misc:windows_setup", f"{_S}:WindowsSandboxSetupParams"),
    M("windowsSandbox/readiness", "misc:windows_readiness"),
    M("server/diagnostics", "misc:diagnostics", f"{_S}:AnyParams", stability=_EXP),
    M("userVerification/status", "misc:verification_status", f"{_S}:AnyParams", stability=_EXP),
    M("userVerification/enroll", "misc:verification_unavailable", f"{_S}:AnyParams", stability=_EXP),
    M("userVerification/delete", "misc:verification_unavailable", f"{_S}:AnyParams", stability=_EXP),
    M("userVerification/verify", "misc:verification_verify", f"{_S}:VerifyParams", stability=_EXP),
    M("userVerification/cancel", "misc:verification_cancel", f"{_S}:VerifyCancelParams", stability=_EXP),
    M("remoteControl/enable", "misc:remote_needs_chatgpt", stability=_EXP),
    M("remoteControl/disable", "misc:remote_needs_chatgpt", stability=_EXP),
    M("remoteControl/status/read", "misc:remote_status", stability=_EXP),
    M("remoteControl/pairing/start", "misc:pairing_start", f"{_S}:AnyParams", stability=_EXP),
    M("remoteControl/pairing/status", "misc:pairing_status", f"{_S}:PairingStatusParams", stability=_EXP),
    M("remoteControl/client/list", "misc:remote_needs_chatgpt",
      f"{_S}:RemoteClientListParams", stability=_EXP),
    M("remoteControl/client/revoke", "misc:remote_needs_chatgpt",
      f"{_S}:RemoteClientRevokeParams", stability=_EXP),
    M("mock/experimentalMethod", "misc:mock_method", f"{_S}:MockParams", stability=_EXP),
    # -- environments ----------------------------------------------------------------------------------------
    M("environment/add", "environments:environment_add", f"{_S}:EnvironmentAddParams", stability=_EXP),
    M("environment/info", "environments:environment_info", f"{_S}:EnvironmentIdParams", stability=_EXP),
    M("environment/status", "environments:environment_status", f"{_S}:EnvironmentIdParams", stability=_EXP),
    # -- mcp -------------------------------------------------------------------------------------------------
    M("mcpServerStatus/list", "mcp:status_list", f"{_MCP}:ListMcpServerStatusParams"),
    M("mcpServer/tool/call", "mcp:tool_call", f"{_MCP}:McpServerToolCallParams",
      accepts="handlers.mcp:_ToolCallParams"),
    M("mcpServer/resource/read", "mcp:resource_read", f"{_MCP}:McpResourceReadParams"),
    M("config/mcpServer/reload", "mcp:reload"),
    M("mcpServer/oauth/login", "mcp:oauth_login", f"{_MCP}:McpServerOauthLoginParams"),
    M("mcpServer/event/stream/start", "mcp:event_stream_start",
      f"{_MCP}:McpServerEventStreamStartParams", stability=_EXP),
    M("mcpServer/event/stream/stop", "mcp:event_stream_stop",
      f"{_MCP}:McpServerEventStreamStopParams", stability=_EXP),
)
