"""Plugins, marketplaces and apps, and the skills settings requests.

Local marketplaces are served by ``marketplaces.Store``; there is no remote catalog, so everything that
needs it answers with Codex's "chatgpt authentication required" errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app_server.context import HandlerContext
from app_server.handlers.marketplaces import Store, load_marketplace
from app_server.protocol import surface as p
from app_server.protocol.declarations import Handler
from pycodex.json_types import JsonObj
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


def _remote(action: str) -> InvalidRequest:
    return InvalidRequest(f"{action}: {REMOTE_AUTH}")


def _remote_only(action: str) -> Handler:
    """A handler for a method that only works against the remote plugin catalog: Codex's refusal."""
    async def handler(ctx: HandlerContext, params: Any) -> JsonObj:
        raise _remote(action)

    handler.__name__ = "remote_only"
    return handler


def _store(ctx: HandlerContext) -> Store:
    return Store(ctx.services.codex_home)


def _listing(ctx: HandlerContext, *, installed_only: bool) -> tuple[list[JsonObj], list[JsonObj]]:
    store = _store(ctx)
    markets, errors = store.marketplaces()
    entries = []
    for market in markets:
        plugins = [store.summary(market, entry) for entry in market.plugins]
        if installed_only:
            plugins = [plugin for plugin in plugins if plugin["installed"]]
            if not plugins:
                continue
        entries.append({"name": market.name, "path": str(market.manifest), "interface": None, "plugins": plugins})
    return entries, errors


async def plugin_list(ctx: HandlerContext, params: p.CwdsParams) -> JsonObj:
    entries, errors = _listing(ctx, installed_only=False)
    return {"marketplaces": entries, "marketplaceLoadErrors": errors, "featuredPluginIds": []}


async def plugin_installed(ctx: HandlerContext, params: p.CwdsParams) -> JsonObj:
    entries, errors = _listing(ctx, installed_only=True)
    return {"marketplaces": entries, "marketplaceLoadErrors": errors}


def _one_source(params: p.PluginReadParams, method: str) -> None:
    if (params.marketplace_path is None) == (params.remote_marketplace_name is None):
        raise InvalidRequest(f"{method} requires exactly one of marketplacePath or remoteMarketplaceName")


async def plugin_read(ctx: HandlerContext, params: p.PluginReadParams) -> JsonObj:
    _one_source(params, "plugin/read")
    if params.remote_marketplace_name is not None:
        raise _remote("read remote plugin details")
    market = load_marketplace(Path(str(params.marketplace_path)))
    return {"plugin": _store(ctx).detail(market, market.find(params.plugin_name))}


async def plugin_install(ctx: HandlerContext, params: p.PluginReadParams) -> JsonObj:
    _one_source(params, "plugin/install")
    if params.remote_marketplace_name is not None:
        raise _remote("read remote plugin details before install")
    market = load_marketplace(Path(str(params.marketplace_path)))
    try:
        _store(ctx).install(market, market.find(params.plugin_name))
        ctx.services.skills_catalog.invalidate()  # its skills join the user's
    except OSError as exc:
        raise InvalidRequest(f"failed to install plugin `{params.plugin_name}`: {os_error_text(exc)}") from None
    return {"authPolicy": "ON_INSTALL", "appsNeedingAuth": []}


async def plugin_uninstall(ctx: HandlerContext, params: p.PluginUninstallParams) -> JsonObj:
    try:
        if _store(ctx).uninstall(params.plugin_id):
            ctx.services.skills_catalog.invalidate()
            return {}
    except OSError as exc:
        raise InvalidRequest(f"failed to uninstall plugin `{params.plugin_id}`: {os_error_text(exc)}") from None
    raise _remote("resolve remote plugin before uninstall")


async def plugin_reconcile(ctx: HandlerContext, params: p.AnyParams) -> JsonObj:
    return {"changedPlugins": [], "failedRemotePluginIds": [], "failedMaterializationRemotePluginIds": []}


async def plugin_search(ctx: HandlerContext, params: p.PluginSearchParams) -> JsonObj:
    return {"data": [], "nextCursor": None}


async def marketplace_add(ctx: HandlerContext, params: p.MarketplaceAddParams) -> JsonObj:
    if "://" in params.source or params.source.endswith(".git"):
        raise InvalidRequest(f"failed to add marketplace `{params.source}`: git marketplaces need network access")
    try:
        root = Path(params.source).resolve(strict=True)
    except OSError as exc:
        raise InvalidRequest(f"failed to resolve local marketplace source path: {os_error_text(exc)}") from None
    name, already = _store(ctx).add(root)
    return {"marketplaceName": name, "installedRoot": str(root), "alreadyAdded": already}


async def marketplace_remove(ctx: HandlerContext, params: p.MarketplaceRemoveParams) -> JsonObj:
    _store(ctx).remove(params.marketplace_name)
    return {"marketplaceName": params.marketplace_name, "installedRoot": None}


async def marketplace_upgrade(ctx: HandlerContext, params: p.MarketplaceUpgradeParams) -> JsonObj:
    # Local marketplaces are read in place, so there is never anything to upgrade.
    if params.marketplace_name is not None and params.marketplace_name not in _store(ctx).sources():
        raise InvalidRequest(f"marketplace `{params.marketplace_name}` is not configured or installed")
    return {"selectedMarketplaces": [], "upgradedRoots": [], "errors": []}


async def app_list(ctx: HandlerContext, params: p.AnyParams) -> JsonObj:
    return {"data": [], "nextCursor": None}


async def app_read(ctx: HandlerContext, params: p.AppsReadParams) -> JsonObj:
    return {"apps": [], "missingAppIds": list(params.app_ids)}


async def app_installed(ctx: HandlerContext, params: p.AnyParams) -> JsonObj:
    return {"apps": []}


def _toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


async def skills_config_write(ctx: HandlerContext, params: p.SkillsConfigWriteParams) -> JsonObj:
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
    return {"effectiveEnabled": params.enabled}


async def extra_roots_set(ctx: HandlerContext, params: p.SkillsExtraRootsSetParams) -> JsonObj:
    for root in params.extra_roots:
        if not Path(root).is_absolute():
            raise InvalidRequest("Invalid request: AbsolutePathBuf deserialized without a base path")
    ctx.services.skills_catalog.set_extra_roots(params.extra_roots)

    async def changed() -> None:
        await ctx.session.notify("skills/changed", {})

    ctx.session.after_response(changed)
    return {}


# The refusing handlers, one per method (each names what it would need).
plugin_skill_read = _remote_only("read remote plugin skill details")
plugin_share_save = _remote_only("save remote plugin share")
plugin_share_update_targets = _remote_only("update remote plugin share targets")
plugin_share_list = _remote_only("list remote plugin shares")
plugin_share_checkout = _remote_only("checkout plugin share")
plugin_share_delete = _remote_only("delete remote plugin share")
