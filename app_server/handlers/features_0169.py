"""The feature flags Codex 0.169.0 lists in experimentalFeature/list: (name, stage, enabled by default).

Names, stages and defaults are facts of that release (clients key /experimental toggles on them); the
beta features' display texts below are pycodex's own words."""

from __future__ import annotations

__all__ = ["BETA_TEXTS", "FEATURES"]

# stage codes: s stable, b beta, u underDevelopment, d deprecated, r removed
_STAGES = {"s": "stable", "b": "beta", "u": "underDevelopment", "d": "deprecated", "r": "removed"}

_TABLE = """
analytics_plan_history b 0
cli_resume_account_check u 0
daemon_auto_start s 1
tui_workspace u 0
tui_multi_backend u 0
tui_extensions_statusline u 0
app_server_websocket_compression u 0
transcript_v2 r 0
undo r 0
shell_tool s 1
view_image s 1
multi_env_copy_file u 0
sleep_tool s 1
secret_auth_storage s 0
unified_exec s 1
unified_exec_tty s 1
shell_zsh_fork r 0
unified_exec_zsh_fork r 0
shell_snapshot s 1
login_shell_package_path b 0
powershell_shell_version u 0
shell_snapshot_v2 u 0
deferred_executor u 0
cwd_relative_turn_diffs u 0
js_repl r 0
content_item_kinds s 1
untrusted_as_tool_output s 1
executed_tool_call_metadata u 0
stable_environment_tools r 0
code_mode u 0
code_mode_tool_search u 0
code_mode_buffered_exec r 0
code_mode_host s 1
code_mode_host_grpc s 1
code_mode_host_output_truncation s 1
code_mode_prewarm u 0
code_mode_interrupt s 1
code_mode_tool_description_first r 0
instant_interrupt u 1
interrupt_on_cancel u 0
code_mode_only u 0
code_mode_only_strict_3p_tools u 0
js_repl_tools_only r 0
terminal_resize_reflow r 1
web_search_request d 0
web_search_cached d 0
standalone_web_search u 0
hosted_search_policy u 0
search_tool r 0
codex_git_commit r 0
runtime_metrics u 0
critical_path_timing u 0
sqlite r 1
memories s 0
external_agent_memory_import u 0
local_thread_store_compression u 0
local_thread_store_shared_compression r 0
background_paginated_rollout_migration u 0
chronicle u 0
apply_patch_freeform r 0
apply_patch_streaming_events u 0
apply_patch_preserve_line_endings r 0
exec_permission_approvals u 0
write_stdin_approval s 1
hooks s 1
request_permissions_tool u 0
use_linux_sandbox_bwrap r 0
use_legacy_landlock d 0
request_rule r 0
experimental_windows_sandbox r 0
elevated_windows_sandbox r 0
windows_sandbox_service u 0
prefer_mxc u 0
remote_models r 0
api_key_model_discovery s 1
cli_daybreak s 1
api_key_cyber_access_programs s 1
daybreak_program_propagation u 0
enable_request_compression s 1
unbounded_connection_retries s 1
network_proxy b 0
credential_masking u 0
worktrees r 1
respect_system_proxy b 0
system_proxy_fallback s 1
multi_agent d 1
multi_agent_v2 s 0
model_catalog_in_context u 0
multi_agent_v2_dynamic_tools u 0
subagent_thread_environments u 0
subagent_default_context_limits u 0
defer_mailbox_preemption u 0
wake_on_agent_messages u 0
agent_message_board u 0
agent_message_board_mcp u 0
multi_agent_mode r 0
enable_fanout r 0
apps s 1
psp u 0
enable_mcp_apps u 0
mcp_2026_07_28 u 0
mcp_tool_list_changed u 0
mcp_connection_sharing u 0
mcp_lazy_stdio_startup u 0
apps_early_resource_discovery u 0
codex_apps_mcp_2026_07_28 u 0
mcp_oauth_refresh_coordination s 1
use_xaa u 0
apps_mcp_path_override r 0
tool_search r 0
tool_search_always_defer_mcp_tools r 1
deferred_tool_world_state s 1
command_sessions_world_state u 0
incremental_tools s 1
incremental_tools_legacy s 0
incremental_tools_legacy_gcp s 1
suppress_model_change_announcements s 0
prediction_preserve_parent_tools s 1
incremental_exec_tools u 0
non_prefixed_mcp_tool_names u 0
unavailable_dummy_tools r 0
tool_suggest s 1
recommended_plugins s 0
plugins s 1
simplified_selection_hints u 0
executor_capability_discovery u 0
executor_capability_discovery_v2 u 0
skip_host_skill_discovery u 0
plugin_hooks r 0
in_app_browser s 1
browser_annotation_api s 1
in_app_chat s 1
in_app_dictation s 1
in_app_voice s 1
in_app_local_automation s 1
in_app_updates s 1
browser_use s 1
browser_use_full_cdp_access s 1
browser_use_external s 1
computer_use s 1
remote_plugin s 1
plugin_discovery_prefetch r 0
plugin_sharing s 1
external_migration r 0
image_generation s 1
image_generation_animation u 0
omit_app_server_notification_media u 0
image_resize_notice u 0
unified_image_budget s 1
resize_all_images r 1
item_ids r 1
concurrent_reasoning_summaries u 0
output_token_replay u 0
skill_mcp_dependency_install s 1
omit_skill_descriptions u 0
skill_search s 1
skill_catalog_deltas u 0
skill_env_var_dependency_prompt r 0
mentions_v2 s 1
steer r 1
default_mode_request_user_input u 0
send_async_message r 0
send_message_to_user_async u 0
terminal_visualization_instructions u 0
guardian_approval s 1
guardian_include_additional_context s 1
guardian_recorded_items u 0
guardianv2.thread_context r 0
guardian_reuse_parent_compaction s 1
guardian_root_handoff_context u 0
guardian_native_multi_agent_history u 0
guardian_enhanced_node_repl_transcripts u 0
guardian_node_repl_transcript_images u 0
guardian_trust_orchestrator_connectors u 0
guardian_conversation_history_tools u 0
guardian_denial_reconsideration u 0
guardianv2 u 0
guardianv2_decisions_comparison u 0
guardianv3 u 0
guardian_ext r 0
goals s 1
token_budget u 0
context_management u 0
rollout_budget u 0
reasoning_effort_override s 1
current_time_reminder u 0
nonfatal_clock_read_errors u 0
collaboration_modes r 1
tool_call_mcp_elicitation s 1
auth_elicitation s 1
bedrock_setup_wizard s 1
gcp_setup_wizard s 0
gateway_setup_wizard s 0
personality r 0
artifact u 0
fast_mode s 1
ultrafast_mode s 1
step_model_switching u 0
realtime_conversation r 1
remote_control r 0
image_detail_original r 0
tui_app_server r 1
prevent_idle_sleep b 0
workspace_owner_usage_nudge r 0
responses_websockets r 0
responses_websockets_v2 r 0
remote_compaction_v2 r 0
async_compaction u 0
async_compaction_root_only u 0
compaction_image_budget s 1
retain_client_developer_messages u 0
retain_client_tool_outputs s 1
use_agent_identity u 0
runtime_agent_instances u 0
workspace_dependencies s 1
"""

FEATURES: tuple[tuple[str, str, bool], ...] = tuple(
    (name, _STAGES[stage], on == "1") for name, stage, on in (line.split() for line in _TABLE.strip().splitlines())
)

BETA_TEXTS: dict[str, tuple[str, str]] = {
    "analytics_plan_history": ("Plan usage history", "Show the history of five-hour and weekly allowances in /analytics."),
    "login_shell_package_path": ("Bundled tools on PATH", "Keep bundled tools such as ripgrep reachable when a login shell rewrites PATH."),
    "network_proxy": ("Network proxy", "Route sandboxed sessions that have network access through the network proxy."),
    "respect_system_proxy": ("System proxy", "Honour the operating system's proxy settings for requests."),
    "prevent_idle_sleep": ("Stay awake while running", "Keep the computer from sleeping while a thread is running."),
}
