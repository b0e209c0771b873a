"""Responses of the configuration-side methods: model providers, config writes and requirements, MCP
servers, hooks and environments.

Field names and types follow Codex 0.169's response schema; field order is the order the handlers emit
(Codex's where recorded). Built with ``Model.model_validate(handler_dict)``; ``to_wire`` gives the dict back.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from pycodex.json_types import JsonObj, JsonValue

from .base import OMIT_IF_NONE, OmittingWireModel, WireModel
from .config_requirements import ConfigRequirements

WriteStatus = Literal["ok", "okOverridden"]
EnvironmentStatusKind = Literal["ready", "pending", "disconnected", "unknown"]


class ModelProviderSummary(WireModel):
    """One configured model provider: id, name, whether it can be edited, its base URL and settings."""

    id: str
    name: str
    can_edit: bool
    base_url: str | None = None
    settings: JsonObj


class ModelProviderListResponse(WireModel):
    """The result of `modelProvider/list`."""

    data: list[ModelProviderSummary]
    default_provider_id: str
    can_change_default: bool


class ModelProviderCapabilitiesReadResponse(WireModel):
    """The result of `modelProvider/capabilities/read`."""

    image_generation: bool
    web_search: bool


class ModelProviderConfigWriteResponse(WireModel):
    """The result of `modelProvider/config/write`."""

    provider: ModelProviderSummary


class ConfigLayerMetadata(WireModel):
    """Which config layer a value came from (`name`, a ConfigLayerSource) and that layer's version."""

    name: JsonObj
    version: str


class OverriddenMetadata(WireModel):
    """Why a written config value does not take effect: the layer above that sets it, and its value."""

    message: str
    effective_value: JsonValue
    overriding_layer: ConfigLayerMetadata


class ConfigWriteResponse(WireModel):
    """The result of `config/value/write`."""

    status: WriteStatus
    version: str
    file_path: str
    overridden_metadata: OverriddenMetadata | None = None


class ConfigRequirementsReadResponse(WireModel):
    """The result of `configRequirements/read`."""

    supports_independent_speed_modes: bool | None = None
    requirements: ConfigRequirements | None = None  # always null: pycodex enforces no managed requirements


McpAuthStatus = Literal["unknown", "unsupported", "notLoggedIn", "bearerToken", "oAuth"]
McpServerConnectionStatus = Literal[
    "notStarted", "starting", "connected", "authenticationRequired", "failed", "cancelled", "disabled"
]


class McpServerInfo(WireModel):
    """Presentation metadata advertised by an initialized MCP server (its `initialize` answer's `serverInfo`)."""

    name: str
    title: str | None = None
    version: str
    description: str | None = None
    icons: list[JsonValue] | None = None
    website_url: str | None = None


class McpServerStatus(WireModel):
    """One configured MCP server in `mcpServerStatus/list`: its state, what it offers and how it authenticates.

    Tools, resources and capabilities are the MCP server's own objects, passed through as it sent them.
    """

    name: str
    runtime_status: McpServerConnectionStatus | None = None
    plugin_id: str | None = None
    http_origin: str | None = None
    server_info: McpServerInfo | None = None
    server_capabilities: JsonValue = None
    tool_list_meta: JsonValue = None
    tools: dict[str, JsonObj]
    tools_error: str | None = None
    resources: list[JsonObj]
    resource_templates: list[JsonObj]
    auth_status: McpAuthStatus


class ListMcpServerStatusResponse(WireModel):
    """The result of `mcpServerStatus/list`."""

    data: list[McpServerStatus]
    next_cursor: str | None = None


class McpServerToolCallResponse(OmittingWireModel):
    """The result of `mcpServer/tool/call`: the MCP tool's result as the server gave it (absent keys stay absent)."""

    content: list[JsonValue]
    structured_content: Annotated[JsonValue, OMIT_IF_NONE] = None
    is_error: bool | None = None
    meta: Annotated[JsonValue, OMIT_IF_NONE] = Field(default=None, alias="_meta")


class McpResourceReadResponse(WireModel):
    """The result of `mcpServer/resource/read`."""

    contents: list[JsonObj]
    origin_call_id: str | None = None


class McpServerRefreshResponse(WireModel):
    """The result of `config/mcpServer/reload`."""


class McpServerOauthLoginResponse(WireModel):
    """The result of `mcpServer/oauth/login`."""

    authorization_url: str
    login_id: str | None = None


class McpServerEventStreamStartResponse(WireModel):
    """The result of `mcpServer/event/stream/start`."""


class McpServerEventStreamStopResponse(WireModel):
    """The result of `mcpServer/event/stream/stop`."""


class HookErrorInfo(WireModel):
    """A hooks file that could not be read, and why."""

    path: str
    message: str


class HooksListEntry(WireModel):
    """The hooks in effect for one working directory, with warnings and unreadable files."""

    cwd: str
    hooks: list[JsonObj]
    warnings: list[str]
    errors: list[HookErrorInfo]


class HooksListResponse(WireModel):
    """The result of `hooks/list`."""

    data: list[HooksListEntry]


class EnvironmentAddResponse(WireModel):
    """The result of `environment/add`."""


class EnvironmentShellInfo(WireModel):
    """The shell of an execution environment: its name and path."""

    name: str
    path: str


class EnvironmentInfoResponse(WireModel):
    """The result of `environment/info`."""

    shell: EnvironmentShellInfo
    cwd: str | None = None


class EnvironmentStatusResponse(OmittingWireModel):
    """Current status for the requested environment. The result of `environment/status`."""

    status: EnvironmentStatusKind
    error: Annotated[str | None, OMIT_IF_NONE] = None
