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
from .method_table_surface import SURFACE_DECLARATIONS

__all__ = ["DECLARATIONS"]

_T = "protocol.threads"
_SEC = "protocol.thread_sections"
_H = "protocol.thread_history"
_TC = "protocol.thread_controls"
_RT = "protocol.thread_realtime"
_X = "protocol.thread_experimental"
_NM = "protocol.responses_named"  # Codex's names for shared result shapes
_TU = "protocol.turns"
_TR = "protocol.thread_requests"
_PRJ = "protocol.projects"
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
      f"{_H}:ThreadReadStateUpdateParams", stability=_EXP,
      result="protocol.thread_history:ThreadReadStateUpdateResponse"),
    # -- thread_goals ----------------------------------------------------------------------------------------
    M("thread/goal/get", "thread_goals:goal_get", f"{_H}:ThreadGoalGetParams", f"{_H}:ThreadGoalGetResponse"),
    M("thread/goal/set", "thread_goals:goal_set", f"{_H}:ThreadGoalSetParams", f"{_H}:ThreadGoalSetResponse"),
    M("thread/goal/clear", "thread_goals:goal_clear",
      f"{_H}:ThreadGoalClearParams", f"{_H}:ThreadGoalClearResponse"),
    # -- thread_terminals ------------------------------------------------------------------------------------
    M("thread/backgroundTerminals/list", "thread_terminals:terminals_list",
      f"{_H}:BackgroundTerminalsListParams", f"{_NM}:ThreadBackgroundTerminalsListResponse", stability=_EXP),
    M("thread/backgroundTerminals/clean", "thread_terminals:terminals_clean",
      f"{_H}:BackgroundTerminalsCleanParams", f"{_NM}:ThreadBackgroundTerminalsCleanResponse",
      stability=_EXP),
    M("thread/backgroundTerminals/terminate", "thread_terminals:terminals_terminate",
      f"{_H}:BackgroundTerminalsTerminateParams",
      f"{_NM}:ThreadBackgroundTerminalsTerminateResponse", stability=_EXP),
    # -- thread_sections -------------------------------------------------------------------------------------
    M("threadSection/list", "thread_sections:section_list",
      f"{_SEC}:ThreadSectionListParams", f"{_SEC}:ThreadSectionListResponse"),
    M("threadSection/create", "thread_sections:section_create",
      f"{_SEC}:ThreadSectionCreateParams", f"{_NM}:ThreadSectionCreateResponse"),
    M("threadSection/update", "thread_sections:section_update",
      f"{_SEC}:ThreadSectionUpdateParams", f"{_NM}:ThreadSectionUpdateResponse"),
    M("threadSection/delete", "thread_sections:section_delete",
      f"{_SEC}:ThreadSectionDeleteParams", f"{_NM}:ThreadSectionDeleteResponse"),
    M("thread/section/move", "thread_sections:section_move",
      f"{_SEC}:ThreadSectionMoveParams", f"{_NM}:ThreadSectionMoveResponse"),
    M("thread/delete", "thread_sections:thread_delete",
      f"{_SEC}:ThreadDeleteParams", f"{_NM}:ThreadDeleteResponse"),
    M("thread/metadata/update", "thread_sections:metadata_update",
      f"{_SEC}:ThreadMetadataUpdateParams", f"{_SEC}:ThreadMetadataUpdateResponse"),
    # -- thread_search ---------------------------------------------------------------------------------------
    M("thread/search", "thread_search:thread_search", f"{_SEC}:ThreadSearchParams", stability=_EXP,
      result="protocol.responses_threads:ThreadSearchResponse"),
    M("thread/searchOccurrences", "thread_search:occurrences",
      f"{_SEC}:ThreadSearchOccurrencesParams", stability=_EXP,
      result="protocol.responses_threads:ThreadSearchOccurrencesResponse"),
    M("thread/search/stream", "thread_search:thread_search_stream", f"{_SEC}:ThreadSearchParams",
      result="protocol.responses_threads:ThreadSearchResponse"),
    M("thread/search/cancel", "thread_search:search_cancel",
      f"{_SEC}:ThreadSearchCancelParams", "protocol.base:EmptyObject"),
    M("thread/search/stream/cancel", "thread_search:search_cancel",
      f"{_SEC}:ThreadSearchCancelParams", "protocol.base:EmptyObject"),
    # -- projects --------------------------------------------------------------------------------------------
    M("project/list", "projects:project_list", f"{_PRJ}:ProjectListParams", f"{_PRJ}:ProjectListResponse",
      stability=_EXP),
    M("project/read", "projects:project_read", f"{_PRJ}:ProjectReadParams", f"{_PRJ}:ProjectReadResponse",
      stability=_EXP),
    M("project/create", "projects:project_create",
      f"{_PRJ}:ProjectCreateParams", f"{_PRJ}:ProjectCreateResponse", stability=_EXP),
    M("project/import", "projects:project_import",
      f"{_PRJ}:ProjectImportParams", f"{_PRJ}:ProjectImportResponse", stability=_EXP),
    M("project/update", "projects:project_update",
      f"{_PRJ}:ProjectUpdateParams", f"{_PRJ}:ProjectUpdateResponse", stability=_EXP),
    M("project/move", "projects:project_move", f"{_PRJ}:ProjectMoveParams", f"{_PRJ}:ProjectMoveResponse",
      stability=_EXP),
    M("project/delete", "projects:project_delete",
      f"{_PRJ}:ProjectDeleteParams", f"{_PRJ}:ProjectDeleteResponse", stability=_EXP),
    # -- thread_memory ---------------------------------------------------------------------------------------
    M("thread/memoryMode/set", "thread_memory:memory_mode_set",
      f"{_SEC}:ThreadMemoryModeSetParams", f"{_NM}:ThreadMemoryModeSetResponse", stability=_EXP),
    M("memory/status", "thread_memory:memory_status",
      f"{_TR}:MemoryStatusParams", stability=_EXP, result="protocol.responses_threads:MemoryStatusResponse"),
    M("memory/reset", "thread_memory:memory_reset", None, f"{_NM}:MemoryResetResponse", stability=_EXP),
    M("thread/memory/read", "thread_memory:memory_read", f"{_SEC}:ThreadMemoryReadParams", stability=_EXP,
      result="protocol.responses_threads:ThreadMemoryReadResponse"),
    # -- thread_inject ---------------------------------------------------------------------------------------
    M("thread/inject_items", "thread_inject:inject_items",
      f"{_SEC}:ThreadInjectItemsParams", "protocol.base:EmptyObject"),
    # -- thread_compact --------------------------------------------------------------------------------------
    M("thread/compact/start", "thread_compact:compact_start",
      f"{_TR}:ThreadCompactStartParams", f"{_NM}:ThreadCompactStartResponse"),
    # -- thread_shell ----------------------------------------------------------------------------------------
    M("thread/shellCommand", "thread_shell:shell_command",
      f"{_TR}:ThreadShellCommandParams", f"{_NM}:ThreadShellCommandResponse"),
    # -- thread_settings -------------------------------------------------------------------------------------
    M("thread/settings/update", "thread_settings:settings_update",
      f"{_TR}:ThreadSettingsUpdateParams",
      f"{_NM}:ThreadSettingsUpdateResponse", stability=_EXP, probe=True),
    # -- thread_revert ---------------------------------------------------------------------------------------
    M("thread/revert", "thread_revert:revert", f"{_TR}:ThreadRevertParams",
      result="protocol.responses_threads:ThreadRevertResponse"),
    # -- thread_queue ----------------------------------------------------------------------------------------
    M("thread/queue/add", "thread_queue:queue_add",
      f"{_TR}:ThreadQueueAddParams", stability=_EXP,
      result="protocol.responses_threads:ThreadQueueAddResponse"),
    M("thread/queue/list", "thread_queue:queue_list",
      f"{_TR}:ThreadQueueListParams", stability=_EXP,
      result="protocol.responses_threads:ThreadQueueListResponse"),
    M("thread/queue/update", "thread_queue:queue_update",
      f"{_TR}:ThreadQueueUpdateParams", stability=_EXP,
      result="protocol.responses_threads:ThreadQueueUpdateResponse"),
    M("thread/queue/delete", "thread_queue:queue_delete",
      f"{_TR}:ThreadQueueDeleteParams", stability=_EXP,
      result="protocol.responses_threads:ThreadQueueDeleteResponse"),
    M("thread/queue/reorder", "thread_queue:queue_reorder",
      f"{_TR}:ThreadQueueReorderParams", f"{_NM}:ThreadQueueReorderResponse", stability=_EXP),
    M("thread/queue/start", "thread_queue:queue_start",
      f"{_TR}:ThreadQueueStartParams", stability=_EXP,
      result="protocol.responses_threads:ThreadQueueStartResponse"),
    # -- thread_attachments ----------------------------------------------------------------------------------
    M("thread/attachment/add", "thread_attachments:attachment_add",
      f"{_TR}:ThreadAttachmentAddParams", result="protocol.responses_threads:ThreadAttachmentAddResponse"),
    M("thread/attachment/list", "thread_attachments:attachment_list",
      f"{_TR}:ThreadAttachmentListParams", result="protocol.responses_threads:ThreadAttachmentListResponse"),
    M("thread/attachmentOwner/list", "thread_attachments:attachment_owner_list",
      f"{_TR}:ThreadAttachmentOwnerListParams",
      result="protocol.responses_threads:ThreadAttachmentOwnerListResponse"),
    M("thread/attachment/remove", "thread_attachments:attachment_remove",
      f"{_TR}:ThreadAttachmentRemoveParams", f"{_NM}:ThreadAttachmentRemoveResponse"),
    # -- thread_controls -------------------------------------------------------------------------------------
    M("thread/increment_elicitation", "thread_controls:increment_elicitation",
      f"{_TC}:ThreadElicitationParams", f"{_TC}:ThreadElicitationResponse", stability=_EXP),
    M("thread/decrement_elicitation", "thread_controls:decrement_elicitation",
      f"{_TC}:ThreadElicitationParams", f"{_TC}:ThreadElicitationResponse", stability=_EXP),
    M("thread/sample/cancel", "thread_controls:sample_cancel",
      f"{_TC}:ThreadSampleCancelParams", f"{_NM}:ThreadSampleCancelResponse", stability=_EXP),
    M("thread/prediction/request", "thread_controls:prediction_request",
      f"{_TC}:ThreadPredictionRequestParams", f"{_NM}:ThreadPredictionRequestResponse", stability=_EXP),
    M("thread/realtime/listVoices", "thread_controls:realtime_list_voices",
      None, f"{_TC}:ThreadRealtimeListVoicesResponse", stability=_EXP),
    # -- thread_timeline, thread_sample, thread_plan ----------------------------------------------------------
    M("thread/timeline/list", "thread_timeline:timeline_list",
      f"{_X}:ThreadTimelineListParams", f"{_X}:ThreadTimelineListResponse", stability=_EXP),
    M("thread/sample", "thread_sample:thread_sample",
      f"{_X}:ThreadSampleParams", f"{_X}:ThreadSampleResponse", stability=_EXP),
    M("thread/prepareApprovedPlan", "thread_plan:prepare_approved_plan",
      f"{_X}:ThreadPrepareApprovedPlanParams", f"{_X}:ThreadPrepareApprovedPlanResponse", stability=_EXP),
    M("turn/settings/update", "thread_plan:turn_settings_update",
      f"{_X}:TurnSettingsUpdateParams", f"{_X}:TurnSettingsUpdateResponse", stability=_EXP),
    M("rollout/compress", "rollouts:rollout_compress", None, f"{_X}:RolloutCompressResponse", stability=_EXP),
    # -- thread_realtime: no voice service in pycodex, answered as Codex answers without one ------------------
    M("thread/realtime/start", "thread_realtime:realtime_start",
      f"{_RT}:ThreadRealtimeStartParams", f"{_RT}:ThreadRealtimeStartResponse", stability=_EXP),
    M("thread/realtime/appendAudio", "thread_realtime:append_audio",
      f"{_RT}:ThreadRealtimeAppendAudioParams", f"{_RT}:ThreadRealtimeAppendAudioResponse", stability=_EXP),
    M("thread/realtime/appendText", "thread_realtime:append_text",
      f"{_RT}:ThreadRealtimeAppendTextParams", f"{_RT}:ThreadRealtimeAppendTextResponse", stability=_EXP),
    M("thread/realtime/appendSpeech", "thread_realtime:append_speech",
      f"{_RT}:ThreadRealtimeAppendSpeechParams", f"{_RT}:ThreadRealtimeAppendSpeechResponse", stability=_EXP),
    M("thread/realtime/stop", "thread_realtime:realtime_stop",
      f"{_RT}:ThreadRealtimeStopParams", f"{_RT}:ThreadRealtimeStopResponse", stability=_EXP),
    # -- thread_guardian -------------------------------------------------------------------------------------
    M("thread/guardianReview", "thread_guardian:guardian_review",
      f"{_TC}:ThreadGuardianReviewParams", f"{_TC}:ThreadGuardianReviewResponse", stability=_EXP),
    M("thread/approveGuardianDeniedAction", "thread_guardian:approve_denied_action",
      f"{_TC}:ThreadApproveGuardianDeniedActionParams", f"{_NM}:ThreadApproveGuardianDeniedActionResponse"),
    # -- turns -----------------------------------------------------------------------------------------------
    M("turn/start", "turns:turn_start", f"{_TU}:TurnStartParams", f"{_TU}:TurnStartResponse", probe=True),
    M("turn/steer", "turns:turn_steer", f"{_TU}:TurnSteerParams", f"{_TU}:TurnSteerResponse"),
    M("turn/interrupt", "turns:turn_interrupt", f"{_TU}:TurnInterruptParams", f"{_TU}:TurnInterruptResponse"),
    # -- review ----------------------------------------------------------------------------------------------
    M("review/start", "review:review_start", f"{_TR}:ReviewStartParams",
      result="protocol.responses_threads:ReviewStartResponse"),
    *SURFACE_DECLARATIONS,
)
