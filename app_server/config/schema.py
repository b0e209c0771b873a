"""What config.toml may contain: the keys Codex 0.169 knows, and checks for the ones pycodex uses.

Every top-level key Codex reports in `config/read` is accepted (so a Codex config never warns), but
only the keys below are typed and checked. Type errors use serde's wording, e.g.
"invalid type: integer `5`, expected a string", because that is what Codex prints.
"""

from __future__ import annotations

from collections.abc import Mapping

from app_server.protocol.base import describe_json_value

# Every top-level key of Codex 0.169's effective config (`config/read`), plus `profile`.
KNOWN_TOP_LEVEL = frozenset(
    """model review_model model_context_window model_auto_compact_token_limit
    model_auto_compact_token_limit_scope model_provider approval_policy approvals_reviewer sandbox_mode
    sandbox_workspace_write forced_chatgpt_workspace_id forced_login_method web_search client_search_provider
    tools instructions developer_instructions compact_prompt model_reasoning_effort model_reasoning_summary
    model_verbosity service_tier analytics apps browser_use computer_use desktop agents log_dir
    experimental_thread_store_endpoint allow_login_shell disable_paste_burst permissions daybreak sqlite_home
    feedback file_opener audio model_instructions_file personality goals suppress_unstable_features_warning
    notice realtime experimental_use_unified_exec_tool tool_output_token_limit
    include_collaboration_mode_instructions model_providers model_catalog_json responses_api_metadata windows
    marketplaces plan_mode_reasoning_effort skills js_repl_node_path memories features
    experimental_realtime_ws_base_url profiles shell_environment_policy chatgpt_base_url cloud
    experimental_compact_prompt_file show_raw_agent_reasoning orchestrator hooks openai_base_url
    experimental_realtime_ws_backend_prompt mcp_oauth_callback_url otel experimental_realtime_ws_model
    thread_unload_delay_secs mcp_oauth_credentials_store default_permissions project_doc_fallback_filenames
    experimental_realtime_webrtc_call_base_url mcp_optional_startup_grace_ms experimental_thread_store
    include_apps_instructions include_permissions_instructions include_environment_context
    model_post_turn_compact_threshold_percent allow_symlinked_codex_home cli_auth_credentials_store
    js_repl_node_module_dirs history tool_suggest check_for_update_on_startup oss_provider
    hide_agent_reasoning apps_mcp_product_sku experimental_realtime_start_instructions plugins mcp_servers
    mcp_oauth_callback_port notify mcp_enterprise_managed_auth profile tui projects ghost_snapshot
    background_terminal_max_timeout project_root_markers project_doc_max_bytes
    experimental_realtime_ws_startup_context include_environment_context_time auto_review""".split()
)

# pycodex's own top-level tables, read by one of its commands (`[acp]`: `pycodex acp`, docs/acp.md): no warning.
PYCODEX_TOP_LEVEL = frozenset({"acp"})

# Keys of one `model_providers.<id>` table in Codex 0.169, plus pycodex's `script` (scripted provider).
KNOWN_PROVIDER_KEYS = frozenset(
    """name base_url model_catalog_url env_key env_key_instructions experimental_bearer_token auth
    gateway_oauth aws project_id location credential_file wire_api capabilities query_params http_headers
    env_http_headers request_max_retries stream_max_retries stream_idle_timeout_ms
    websocket_connect_timeout_ms requires_openai_auth supports_websockets supports_standalone_web_search
    script""".split()
)

# Keys pycodex acts on (typed here, or read elsewhere: mcp_servers by app_server.mcp, projects for project
# trust), `profile` (refused) and `profiles` (warned about on its own). `features` is left out of the
# warning: it is Codex's catalog of flags, written by `--enable/--disable`, each with its own default.
IMPLEMENTED_TOP_LEVEL = frozenset(
    """model model_provider model_providers approval_policy sandbox_mode developer_instructions instructions
    model_reasoning_effort model_reasoning_summary project_root_markers openai_base_url features mcp_servers
    projects profile profiles hide_agent_reasoning notify otel""".split()
)
# Read only by Codex's terminal UI (which reads them itself, also when it runs against pycodex with
# `codex --remote`); pycodex has no TUI and so nothing to do with them: accepted without a warning.
# (`hide_agent_reasoning` is honoured by `pycodex exec`; `notify` is run by the app-server, as Codex's does.)
CLIENT_ONLY_TOP_LEVEL = frozenset(
    "tui file_opener notice check_for_update_on_startup disable_paste_burst history".split()
)
# Provider keys Codex knows that pycodex does not implement (Bedrock/GCP auth, websockets, model catalogs).
UNIMPLEMENTED_PROVIDER_KEYS = frozenset(
    """model_catalog_url auth gateway_oauth aws project_id location credential_file capabilities
    websocket_connect_timeout_ms supports_websockets supports_standalone_web_search""".split()
)

APPROVAL_POLICIES = ("untrusted", "on-failure", "on-request", "granular", "never")
SANDBOX_MODES = ("read-only", "workspace-write", "danger-full-access")
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max", "ultra")
REASONING_SUMMARIES = ("auto", "concise", "detailed", "none")
WIRE_APIS = ("responses",)
CHAT_WIRE_API_GONE = (
    '`wire_api = "chat"` is no longer supported.\nHow to fix: set `wire_api = "responses"` in your provider '
    "config.\nMore info: https://github.com/openai/codex/discussions/7782"
)


class Invalid(Exception):
    """A value of the wrong type or variant at `path` (message in serde's words)."""

    def __init__(self, path: list[str], message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


def describe(value: object) -> str:
    """How an error message shows a value (serde's wording: ``integer `5```, ``string "x"``, ``map``)."""
    return describe_json_value(value)


def _type_error(path: list[str], value: object, expected: str) -> Invalid:
    return Invalid(path, f"invalid type: {describe(value)}, expected {expected}")


def opt_str(table: Mapping[str, object], key: str, path: list[str]) -> str | None:
    """``table[key]`` as a string, or None when absent; raises Invalid for another type."""
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _type_error([*path, key], value, "a string")
    return value


def opt_bool(table: Mapping[str, object], key: str, path: list[str]) -> bool | None:
    """``table[key]`` as a boolean, or None when absent; raises Invalid for another type."""
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, bool):
        raise _type_error([*path, key], value, "a boolean")
    return value


def opt_u64(table: Mapping[str, object], key: str, path: list[str]) -> int | None:
    """``table[key]`` as a non-negative integer, or None when absent; raises Invalid otherwise."""
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _type_error([*path, key], value, "u64")
    if value < 0:
        raise Invalid([*path, key], f"invalid value: integer `{value}`, expected u64")
    return value


def opt_variant(
    table: Mapping[str, object], key: str, path: list[str], variants: tuple[str, ...]
) -> str | None:
    """``table[key]`` as one of ``variants``, or None when absent; raises Invalid otherwise."""
    value = opt_str(table, key, path)
    if value is None:
        return None
    if value not in variants:
        raise Invalid([*path, key], f"unknown variant `{value}`, expected {_one_of(variants)}")
    return value


def opt_wire_api(table: Mapping[str, object], path: list[str]) -> str | None:
    """A provider's `wire_api`; the retired "chat" gets Codex's how-to-fix message."""
    if table.get("wire_api") == "chat":
        raise Invalid([*path, "wire_api"], CHAT_WIRE_API_GONE)
    return opt_variant(table, "wire_api", path, WIRE_APIS)


def _one_of(variants: tuple[str, ...]) -> str:
    """serde's list of expected variants: "`a`", "`a` or `b`", "one of `a`, `b`, `c`"."""
    quoted = [f"`{v}`" for v in variants]
    if len(quoted) == 1:
        return quoted[0]
    if len(quoted) == 2:
        return f"{quoted[0]} or {quoted[1]}"
    return "one of " + ", ".join(quoted)


def opt_str_map(table: Mapping[str, object], key: str, path: list[str]) -> dict[str, str] | None:
    """``table[key]`` as a string-to-string table, or None when absent; raises Invalid otherwise."""
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise _type_error([*path, key], value, "a map")
    for inner_key, inner in value.items():
        if not isinstance(inner, str):
            raise _type_error([*path, key, inner_key], inner, "a string")
    return dict(value)


def opt_str_list(table: Mapping[str, object], key: str, path: list[str]) -> list[str] | None:
    """``table[key]`` as a list of strings, or None when absent; raises Invalid otherwise."""
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, list):
        raise _type_error([*path, key], value, "a sequence")
    for index, inner in enumerate(value):
        if not isinstance(inner, str):
            raise _type_error([*path, key, str(index)], inner, "a string")
    return list(value)


def opt_table(table: Mapping[str, object], key: str, path: list[str]) -> Mapping[str, object] | None:
    """``table[key]`` as a table, or None when absent; raises Invalid for another type."""
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise _type_error([*path, key], value, "a map")
    return value


def unknown_keys(table: Mapping[str, object]) -> list[str]:
    """Dotted names of keys Codex would ignore (top level and inside provider tables), sorted."""
    found: list[str] = []
    for key, value in table.items():
        if key not in KNOWN_TOP_LEVEL and key not in PYCODEX_TOP_LEVEL:
            found.append(key)
        elif key == "model_providers" and isinstance(value, Mapping):
            for provider_id, provider in value.items():
                if isinstance(provider, Mapping):
                    found.extend(
                        f"model_providers.{provider_id}.{k}" for k in provider if k not in KNOWN_PROVIDER_KEYS
                    )
    return sorted(found)


def unimplemented_keys(table: Mapping[str, object]) -> list[str]:
    """Dotted names of keys Codex knows that pycodex would not act on, sorted."""
    found: list[str] = []
    for key, value in table.items():
        if key in KNOWN_TOP_LEVEL and key not in IMPLEMENTED_TOP_LEVEL and key not in CLIENT_ONLY_TOP_LEVEL:
            found.append(key)
        elif key == "model_providers" and isinstance(value, Mapping):
            for provider_id, provider in value.items():
                if isinstance(provider, Mapping):
                    found.extend(f"model_providers.{provider_id}.{k}" for k in provider
                                 if k in UNIMPLEMENTED_PROVIDER_KEYS)
    return sorted(found)
