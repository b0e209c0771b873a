"""Params of the catalog methods: plugins, apps, experimental features, permission profiles, external-agent
import, account sessions and remote-control clients, with Codex 0.169.0's type names and fields.

Each model declares every field Codex's schema names, so a client (or an SDK generated from
``generate-json-schema``) can send what it would send to Codex. pycodex's answers to most of these are local
and fixed (no remote catalog, no ChatGPT account), so several fields change nothing here: each model's
docstring says which ones pycodex reads.
"""

from __future__ import annotations

from typing import Literal

from pycodex.json_types import JsonValue

from .base import ParamsModel
from .common import OptionalU32
from .surface import PageParams

__all__ = [
    "AccountSessionsListParams",
    "AppsInstalledParams",
    "AppsListParams",
    "AppsReadParams",
    "ExperimentalFeatureListParams",
    "ExternalAgentConfigDetectParams",
    "ExternalAgentConfigImportParams",
    "PermissionProfileListParams",
    "PluginInstallParams",
    "PluginInstalledParams",
    "PluginListParams",
    "PluginReadParams",
    "PluginReconcileParams",
    "PluginSearchParams",
    "PluginShareSaveParams",
    "RemoteControlClientsListParams",
    "RemoteControlPairingStartParams",
]

class PluginListParams(ParamsModel):
    """Params of `plugin/list`. pycodex lists its local marketplaces; it has no remote catalog to refetch or
    filter by kind, so ``force_refetch`` and ``marketplace_kinds`` change nothing."""

    cwds: list[str] | None = None
    force_refetch: bool = False
    marketplace_kinds: list[str] | None = None


class PluginInstalledParams(ParamsModel):
    """Params of `plugin/installed`. ``install_suggestion_plugin_names`` changes nothing (pycodex has no
    mention surfaces)."""

    cwds: list[str] | None = None
    install_suggestion_plugin_names: list[str] | None = None


class PluginReadParams(ParamsModel):
    """Params of `plugin/read`."""

    plugin_name: str
    marketplace_path: str | None = None
    remote_marketplace_name: str | None = None


class PluginInstallParams(PluginReadParams):
    """Params of `plugin/install`; ``install_attempt_id`` only labels Codex's analytics."""

    install_attempt_id: str | None = None


class PluginReconcileParams(ParamsModel):
    """Params of `plugin/reconcile` (no remote plugins here: nothing to reconcile)."""

    reason: str | None = None


class PluginSearchParams(ParamsModel):
    """Params of `plugin/search` (a remote catalog search: pycodex's answer is always empty)."""

    search_term: str
    cursor: str | None = None
    cwds: list[str] | None = None
    limit: OptionalU32 = None
    scope: Literal["global", "workspace", "personal"] | None = None


class PluginShareSaveParams(ParamsModel):
    """Params of `plugin/share/save` (sharing needs a ChatGPT account: refused)."""

    plugin_path: str
    discoverability: Literal["LISTED", "UNLISTED", "PRIVATE"] | None = None
    remote_plugin_id: str | None = None
    share_targets: list[JsonValue] | None = None


class AppsListParams(ParamsModel):
    """EXPERIMENTAL - list available apps/connectors (none without a ChatGPT account)."""

    cursor: str | None = None
    force_refetch: bool = False
    limit: OptionalU32 = None
    thread_id: str | None = None


class AppsReadParams(ParamsModel):
    """EXPERIMENTAL - read metadata for specific apps/connectors (every id is missing here)."""

    app_ids: list[str]
    include_tools: bool = False
    thread_id: str | None = None


class AppsInstalledParams(ParamsModel):
    """Params of `app/installed` (none are installed without a ChatGPT account)."""

    force_refresh: bool = False
    thread_id: str | None = None


class ExperimentalFeatureListParams(PageParams):
    """Params of `experimentalFeature/list`, paged by ``cursor`` and ``limit``; the list is the server's, so
    ``thread_id`` (Codex: a thread's project config) changes nothing."""

    thread_id: str | None = None


class PermissionProfileListParams(PageParams):
    """Params of `permissionProfile/list`, paged by ``cursor`` and ``limit``; the profiles are the server's
    config, so ``cwd`` (Codex: a project's config layers) changes nothing yet."""

    cwd: str | None = None


class ExternalAgentConfigDetectParams(ParamsModel):
    """Params of `externalAgentConfig/detect`."""

    cwds: list[str] | None = None
    include_home: bool = False
    max_session_age_days: OptionalU32 = None
    max_sessions: OptionalU32 = None
    migration_source: str | None = None
    source: str | None = None


class ExternalAgentConfigImportParams(ParamsModel):
    """Params of `externalAgentConfig/import`."""

    migration_items: list[JsonValue]
    migration_source: str | None = None
    provider_id: str | None = None
    source: str | None = None


class AccountSessionsListParams(ParamsModel):
    """Params of `accountSession/list` (no workspace metadata to refresh offline)."""

    refresh_workspace_metadata: bool = False


class RemoteControlPairingStartParams(ParamsModel):
    """Params of `remoteControl/pairing/start`."""

    manual_code: bool = False


class RemoteControlClientsListParams(ParamsModel):
    """Params of `remoteControl/client/list` (remote control needs a ChatGPT account: refused)."""

    environment_id: str
    cursor: str | None = None
    limit: OptionalU32 = None
    order: Literal["asc", "desc"] | None = None
