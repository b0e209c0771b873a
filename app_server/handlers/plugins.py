"""Plugins, marketplaces and apps, and the skills settings requests.

Local marketplaces are served by ``marketplaces.Store``; there is no remote catalog, so everything that
needs it answers with Codex's "chatgpt authentication required" errors."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from app_server.context import HandlerContext
from app_server.handlers.marketplaces import Store, load_marketplace
from app_server.protocol import catalog_params as cp
from app_server.protocol import responses_plugins as rp
from app_server.protocol import surface as p
from app_server.protocol.base import WireModel
from pycodex.jsonrpc.errors import InvalidParams, InvalidRequest
from pycodex.platform.spawn import os_error_text

__all__ = [
    "app_installed", "app_list", "app_read", "extra_roots_set", "marketplace_add", "marketplace_remove",
    "marketplace_upgrade", "plugin_install", "plugin_installed", "plugin_list", "plugin_read",
    "plugin_reconcile", "plugin_search", "plugin_share_checkout", "plugin_share_delete",
    "plugin_share_list", "plugin_share_save", "plugin_share_update_targets", "plugin_skill_read",
    "plugin_uninstall", "skills_config_write",
]

REMOTE_AUTH = "chatgpt authentication required for remote plugin catalog"

R = TypeVar("R", bound=WireModel)


def _remote(action: str) -> InvalidRequest:
    return InvalidRequest(f"{action}: {REMOTE_AUTH}")


def _remote_only(action: str, result: type[R]) -> Callable[[HandlerContext, Any], Awaitable[R]]:
    """A handler for a method that only works against the remote plugin catalog: Codex's refusal (``result``
    is the model it would answer with)."""
    # `Any`: one factory serves methods with different params (or none), whatever the router validated.
    async def handler(ctx: HandlerContext, params: Any) -> R:
        raise _remote(action)

    handler.__name__ = "remote_only"
    handler.__annotations__["return"] = result  # what the declaration test reads: this method's model
    return handler


def _store(ctx: HandlerContext) -> Store:
    return Store(ctx.services.codex_home)


def _listing(
    ctx: HandlerContext, *, installed_only: bool
) -> tuple[list[rp.PluginMarketplaceEntry], list[rp.MarketplaceLoadErrorInfo]]:
    store = _store(ctx)
    markets, errors = store.marketplaces()
    entries = []
    for market in markets:
        plugins = [store.summary(market, entry) for entry in market.plugins]
        if installed_only:
            plugins = [plugin for plugin in plugins if plugin.installed]
            if not plugins:
                continue
        entries.append(rp.PluginMarketplaceEntry(
            name=market.name, path=str(market.manifest), interface=None, plugins=plugins))
    return entries, errors


async def plugin_list(ctx: HandlerContext, params: cp.PluginListParams) -> rp.PluginListResponse:
    entries, errors = _listing(ctx, installed_only=False)
    return rp.PluginListResponse(marketplaces=entries, marketplace_load_errors=errors, featured_plugin_ids=[])


async def plugin_installed(ctx: HandlerContext, params: cp.PluginInstalledParams) -> rp.PluginInstalledResponse:
    entries, errors = _listing(ctx, installed_only=True)
    return rp.PluginInstalledResponse(marketplaces=entries, marketplace_load_errors=errors)


def _one_source(params: cp.PluginReadParams, method: str) -> None:
    if (params.marketplace_path is None) == (params.remote_marketplace_name is None):
        raise InvalidRequest(f"{method} requires exactly one of marketplacePath or remoteMarketplaceName")


async def plugin_read(ctx: HandlerContext, params: cp.PluginReadParams) -> rp.PluginReadResponse:
    _one_source(params, "plugin/read")
    if params.remote_marketplace_name is not None:
        raise _remote("read remote plugin details")
    market = load_marketplace(Path(str(params.marketplace_path)))
    return rp.PluginReadResponse(plugin=_store(ctx).detail(market, market.find(params.plugin_name)))


async def plugin_install(ctx: HandlerContext, params: cp.PluginInstallParams) -> rp.PluginInstallResponse:
    _one_source(params, "plugin/install")
    if params.remote_marketplace_name is not None:
        raise _remote("read remote plugin details before install")
    market = load_marketplace(Path(str(params.marketplace_path)))
    try:
        _store(ctx).install(market, market.find(params.plugin_name))
        ctx.services.skills_catalog.invalidate()  # its skills join the user's
    except OSError as exc:
        raise InvalidRequest(f"failed to install plugin `{params.plugin_name}`: {os_error_text(exc)}") from None
    return rp.PluginInstallResponse(auth_policy="ON_INSTALL", apps_needing_auth=[])


async def plugin_uninstall(ctx: HandlerContext, params: p.PluginUninstallParams) -> rp.PluginUninstallResponse:
    try:
        if _store(ctx).uninstall(params.plugin_id):
            ctx.services.skills_catalog.invalidate()
            return rp.PluginUninstallResponse()
    except OSError as exc:
        raise InvalidRequest(f"failed to uninstall plugin `{params.plugin_id}`: {os_error_text(exc)}") from None
    raise _remote("resolve remote plugin before uninstall")


async def plugin_reconcile(ctx: HandlerContext, params: cp.PluginReconcileParams) -> rp.PluginReconcileResponse:
    return rp.PluginReconcileResponse(
        changed_plugins=[], failed_remote_plugin_ids=[], failed_materialization_remote_plugin_ids=[])


async def plugin_search(ctx: HandlerContext, params: cp.PluginSearchParams) -> rp.PluginSearchResponse:
    return rp.PluginSearchResponse(data=[], next_cursor=None)


async def marketplace_add(ctx: HandlerContext, params: p.MarketplaceAddParams) -> rp.MarketplaceAddResponse:
    if "://" in params.source or params.source.endswith(".git"):
        raise InvalidRequest(f"failed to add marketplace `{params.source}`: git marketplaces need network access")
    try:
        root = Path(params.source).resolve(strict=True)
    except OSError as exc:
        raise InvalidRequest(f"failed to resolve local marketplace source path: {os_error_text(exc)}") from None
    name, already = _store(ctx).add(root)
    return rp.MarketplaceAddResponse(marketplace_name=name, installed_root=str(root), already_added=already)


async def marketplace_remove(ctx: HandlerContext, params: p.MarketplaceRemoveParams) -> rp.MarketplaceRemoveResponse:
    _store(ctx).remove(params.marketplace_name)
    return rp.MarketplaceRemoveResponse(marketplace_name=params.marketplace_name, installed_root=None)


async def marketplace_upgrade(
    ctx: HandlerContext, params: p.MarketplaceUpgradeParams
) -> rp.MarketplaceUpgradeResponse:
    # Local marketplaces are read in place, so there is never anything to upgrade.
    if params.marketplace_name is not None and params.marketplace_name not in _store(ctx).sources():
        raise InvalidRequest(f"marketplace `{params.marketplace_name}` is not configured or installed")
    return rp.MarketplaceUpgradeResponse(selected_marketplaces=[], upgraded_roots=[], errors=[])


async def app_list(ctx: HandlerContext, params: cp.AppsListParams) -> rp.AppsListResponse:
    return rp.AppsListResponse(data=[], next_cursor=None)


async def app_read(ctx: HandlerContext, params: cp.AppsReadParams) -> rp.AppsReadResponse:
    return rp.AppsReadResponse(apps=[], missing_app_ids=list(params.app_ids))


async def app_installed(ctx: HandlerContext, params: cp.AppsInstalledParams) -> rp.AppsInstalledResponse:
    return rp.AppsInstalledResponse(apps=[])


def _toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


async def skills_config_write(
    ctx: HandlerContext, params: p.SkillsConfigWriteParams
) -> rp.SkillsConfigWriteResponse:
    if (params.name is None) == (params.path is None):
        raise InvalidParams("skills/config/write requires exactly one of path or name")
    key = "name" if params.name is not None else "path"
    value = params.name if params.name is not None else str(params.path)
    config = ctx.services.codex_home / "config.toml"
    entry = f"\n[[skills.config]]\n{key} = {_toml_string(value)}\nenabled = {str(params.enabled).lower()}\n"
    try:
        with config.open("a", encoding="utf-8") as handle:
            handle.write(entry)
    except OSError as exc:
        raise InvalidRequest(f"failed to write skills config: {os_error_text(exc)}") from None
    ctx.services.skills_catalog.invalidate()
    return rp.SkillsConfigWriteResponse(effective_enabled=params.enabled)


async def extra_roots_set(
    ctx: HandlerContext, params: p.SkillsExtraRootsSetParams
) -> rp.SkillsExtraRootsSetResponse:
    for root in params.extra_roots:
        if not Path(root).is_absolute():
            raise InvalidRequest("Invalid request: AbsolutePathBuf deserialized without a base path")
    ctx.services.skills_catalog.set_extra_roots(params.extra_roots)

    async def changed() -> None:
        await ctx.session.notify("skills/changed", {})

    ctx.session.after_response(changed)
    return rp.SkillsExtraRootsSetResponse()


# The refusing handlers, one per method (each names what it would need and the model it would answer with).
plugin_skill_read = _remote_only("read remote plugin skill details", rp.PluginSkillReadResponse)
plugin_share_save = _remote_only("save remote plugin share", rp.PluginShareSaveResponse)
plugin_share_update_targets = _remote_only("update remote plugin share targets", rp.PluginShareUpdateTargetsResponse)
plugin_share_list = _remote_only("list remote plugin shares", rp.PluginShareListResponse)
plugin_share_checkout = _remote_only("checkout plugin share", rp.PluginShareCheckoutResponse)
plugin_share_delete = _remote_only("delete remote plugin share", rp.PluginShareDeleteResponse)
