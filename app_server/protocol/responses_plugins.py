"""Responses of the skills-config, plugin, marketplace and app methods.

Field names and types follow Codex 0.169's response schema; field order is the order the handlers emit
(Codex's where recorded). Built with ``Model.model_validate(handler_dict)``; ``to_wire`` gives the dict back.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from pycodex.json_types import JsonObj

from .base import OMIT_IF_NONE, OmittingWireModel, WireModel

PluginAuthPolicy = Literal["ON_INSTALL", "ON_USE"]
PluginAvailability = Literal["DISABLED_BY_ADMIN", "AVAILABLE"]
PluginDisabledReason = Literal["disabled_by_admin", "plan_not_eligible", "required_app_unavailable", "unknown"]
PluginInstallPolicy = Literal["NOT_AVAILABLE", "AVAILABLE", "INSTALLED_BY_DEFAULT"]
PluginInstallPolicySource = Literal["WORKSPACE_SETTING", "IMPLICIT_CANONICAL_APP"]
PluginShareDiscoverability = Literal["LISTED", "UNLISTED", "PRIVATE"]
PluginSharePrincipalType = Literal["user", "group", "workspace"]
PluginSharePrincipalRole = Literal["reader", "editor", "owner"]


class SkillsConfigWriteResponse(WireModel):
    """The result of `skills/config/write`."""

    effective_enabled: bool


class SkillsExtraRootsSetResponse(WireModel):
    """The result of `skills/extraRoots/set`."""


class MarketplaceInterface(WireModel):
    """How a marketplace presents itself (its display name)."""

    display_name: str | None = None


class PluginSummary(OmittingWireModel):
    """One plugin as the listings show it: id, versions, source, install and auth policy, state."""

    id: str
    remote_plugin_id: str | None = None
    version: str | None = None
    local_version: str | None = None
    name: str
    share_context: JsonObj | None = None
    source: JsonObj
    installed: bool
    installed_at: int | None = None
    enabled: bool
    install_policy: PluginInstallPolicy
    install_policy_source: PluginInstallPolicySource | None = None
    must_show_installation_interstitial: bool | None = None
    auth_policy: PluginAuthPolicy
    availability: Annotated[PluginAvailability | None, OMIT_IF_NONE] = None
    disabled_reason: PluginDisabledReason | None = None
    eligible_plan_types: list[str] | None = None
    interface: JsonObj | None = None
    keywords: list[str] = Field(default_factory=list)


class PluginMarketplaceEntry(WireModel):
    """One marketplace and the plugins it offers."""

    name: str
    path: str | None = None
    interface: MarketplaceInterface | None = None
    plugins: list[PluginSummary]


class MarketplaceLoadErrorInfo(WireModel):
    """A marketplace manifest that could not be loaded, and why."""

    marketplace_path: str
    message: str


class PluginListResponse(WireModel):
    """The result of `plugin/list`."""

    marketplaces: list[PluginMarketplaceEntry]
    marketplace_load_errors: list[MarketplaceLoadErrorInfo] = Field(default_factory=list)
    featured_plugin_ids: list[str] = Field(default_factory=list)


class PluginInstalledResponse(WireModel):
    """The result of `plugin/installed`."""

    marketplaces: list[PluginMarketplaceEntry]
    marketplace_load_errors: list[MarketplaceLoadErrorInfo] = Field(default_factory=list)


class SkillSummary(WireModel):
    """A skill a plugin bundles, as `plugin/read` lists it (its name is `<plugin>:<skill>`)."""

    name: str
    description: str
    short_description: str | None = None
    interface: JsonObj | None = None
    path: str | None = None
    enabled: bool


class PluginDetail(WireModel):
    """One plugin in full (`plugin/read`): its summary, what it bundles, where its marketplace is.

    Hooks, apps, app templates, MCP servers and scheduled tasks are Codex's objects, passed through.
    """

    marketplace_name: str
    marketplace_path: str | None = None
    summary: PluginSummary
    share_url: str | None = None
    description: str | None = None
    skills: list[SkillSummary]
    onboarding_skill: SkillSummary | None = None
    hooks: list[JsonObj]
    apps: list[JsonObj]
    app_templates: list[JsonObj]
    mcp_servers: list[JsonObj]
    scheduled_tasks: list[JsonObj] | None = None


class PluginReadResponse(WireModel):
    """The result of `plugin/read`."""

    plugin: PluginDetail


class AppSummary(WireModel):
    """EXPERIMENTAL - app metadata summary for plugin responses."""

    category: str | None = None
    description: str | None = None
    id: str
    install_url: str | None = None
    name: str


class PluginInstallResponse(WireModel):
    """The result of `plugin/install`."""

    auth_policy: PluginAuthPolicy
    apps_needing_auth: list[AppSummary]


class PluginUninstallResponse(WireModel):
    """The result of `plugin/uninstall`."""


class PluginReconcileChangedPlugin(WireModel):
    """One plugin `plugin/reconcile` saw change, with the kinds of runtime pieces it declares."""

    has_apps: bool
    has_hooks: bool
    has_mcps: bool
    has_skills: bool
    id: str


class PluginReconcileResponse(WireModel):
    """The result of `plugin/reconcile`: the plugins this pass saw change, and the ones it failed on."""

    changed_plugins: list[PluginReconcileChangedPlugin]
    failed_remote_plugin_ids: list[str]
    failed_materialization_remote_plugin_ids: list[str]


class PluginSearchResult(WireModel):
    """One `plugin/search` hit: the plugin and the marketplace that offers it."""

    marketplace_name: str
    marketplace_path: str | None = None
    plugin: PluginSummary


class PluginSearchResponse(WireModel):
    """The result of `plugin/search`."""

    data: list[PluginSearchResult]
    next_cursor: str | None = None


class PluginSkillReadResponse(WireModel):
    """The result of `plugin/skill/read`."""

    contents: str | None = None


class PluginShareSaveResponse(WireModel):
    """The result of `plugin/share/save`."""

    can_publish_to_workspace: bool | None = None
    remote_plugin_id: str
    share_url: str


class PluginSharePrincipal(WireModel):
    """Someone a plugin is shared with (a user, group or workspace), and their role."""

    name: str
    principal_id: str
    principal_type: PluginSharePrincipalType
    role: PluginSharePrincipalRole


class PluginShareUpdateTargetsResponse(WireModel):
    """The result of `plugin/share/updateTargets`."""

    discoverability: PluginShareDiscoverability
    principals: list[PluginSharePrincipal]


class PluginShareListItem(WireModel):
    """One plugin shared with the user, and where it is checked out locally."""

    local_plugin_path: str | None = None
    plugin: PluginSummary


class PluginShareListResponse(WireModel):
    """The result of `plugin/share/list`."""

    data: list[PluginShareListItem]


class PluginShareCheckoutResponse(WireModel):
    """The result of `plugin/share/checkout`."""

    marketplace_name: str
    marketplace_path: str
    plugin_id: str
    plugin_name: str
    plugin_path: str
    remote_plugin_id: str
    remote_version: str | None = None


class PluginShareDeleteResponse(WireModel):
    """The result of `plugin/share/delete`."""


class MarketplaceAddResponse(WireModel):
    """The result of `marketplace/add`."""

    marketplace_name: str
    installed_root: str
    already_added: bool


class MarketplaceRemoveResponse(WireModel):
    """The result of `marketplace/remove`."""

    marketplace_name: str
    installed_root: str | None = None


class MarketplaceUpgradeErrorInfo(WireModel):
    """A marketplace `marketplace/upgrade` could not upgrade, and why."""

    marketplace_name: str
    message: str


class MarketplaceUpgradeResponse(WireModel):
    """The result of `marketplace/upgrade`."""

    selected_marketplaces: list[str]
    upgraded_roots: list[str]
    errors: list[MarketplaceUpgradeErrorInfo]


class AppsListResponse(WireModel):
    """EXPERIMENTAL - app list response. The result of `app/list`."""

    data: list[JsonObj]
    next_cursor: str | None = None


class AppToolSummary(WireModel):
    """EXPERIMENTAL - metadata returned by app/read."""

    description: str
    disabled_reason: str | None = None
    is_enabled: bool = True
    is_read_only: bool = False
    name: str
    title: str | None = None


class ConnectorMetadata(WireModel):
    """EXPERIMENTAL - metadata returned by app/read."""

    description: str | None = None
    distribution_channel: str | None = None
    icon_url: str | None = None
    icon_url_dark: str | None = None
    id: str
    install_url: str | None = None
    name: str
    plugin_display_names: list[str] = Field(default_factory=list)
    tool_summaries: list[AppToolSummary] | None = None


class AppsReadResponse(WireModel):
    """EXPERIMENTAL - app/read response. The result of `app/read`."""

    apps: list[ConnectorMetadata]
    missing_app_ids: list[str]


class InstalledApp(WireModel):
    """Installed connector runtime state."""

    callable: bool
    enabled: bool
    id: str
    runtime_name: str | None = None


class AppsInstalledResponse(WireModel):
    """The installed connectors in one committed runtime snapshot. The result of `app/installed`."""

    apps: list[InstalledApp]
