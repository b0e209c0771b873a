"""model/list and modelProvider/*: listings from the bundled catalog (app_server.model.catalog) and the
merged config table; writes go to config.toml through app_server.config.write."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from app_server.config.effective import read_layers
from app_server.config.loader import plain_table
from app_server.context import HandlerContext
from app_server.lazy import LazyModule
from app_server.model.catalog import catalog, model_list, model_provider_capabilities, model_provider_list
from app_server.protocol import responses_config as rc
from app_server.protocol import server_info as p
from app_server.protocol import settings as s
from pycodex.json_types import JsonObj

if TYPE_CHECKING:
    from app_server.config import write as config_write
    from app_server.model import provider_write as model_provider_write
else:
    config_write = LazyModule("app_server.config.write")
    model_provider_write = LazyModule("app_server.model.provider_write")

__all__ = ["list_models", "list_providers", "read_capabilities", "set_default_provider", "write_provider"]


async def list_models(ctx: HandlerContext, params: p.ModelListParams) -> p.ModelListResponse:
    listed = model_list(
        catalog(), ctx.services.config.raw, include_hidden=params.include_hidden, cursor=params.cursor,
        limit=params.limit, model_provider=params.model_provider,
    )
    return p.ModelListResponse.model_validate(listed)


async def list_providers(ctx: HandlerContext, params: None) -> rc.ModelProviderListResponse:
    return rc.ModelProviderListResponse.model_validate(model_provider_list(ctx.services.config.raw))


async def read_capabilities(ctx: HandlerContext, params: None) -> rc.ModelProviderCapabilitiesReadResponse:
    return rc.ModelProviderCapabilitiesReadResponse.model_validate(
        model_provider_capabilities(ctx.services.config.raw)
    )


# config.write (and tomlkit) load on the first write, not at server start-up.
async def write_provider(
    ctx: HandlerContext, params: s.ModelProviderConfigWriteParams
) -> rc.ModelProviderConfigWriteResponse:
    write_values = config_write.write_values
    gateway_edits = model_provider_write.gateway_edits

    services = ctx.services
    layers = services.config.layers
    user: JsonObj = next((plain_table(layer.config) for layer in layers if layer.kind == "user"), {})
    provider_id, edits = gateway_edits(params.settings, user)
    outcome = await asyncio.to_thread(
        write_values, services.config.config_path, edits, codex_home=services.codex_home
    )
    services.reload_config()
    listed = model_provider_list(outcome.table)["data"]
    provider = next(entry for entry in listed if entry["id"] == provider_id)
    return rc.ModelProviderConfigWriteResponse(provider=rc.ModelProviderSummary.model_validate(provider))


async def set_default_provider(
    ctx: HandlerContext, params: s.ModelProviderDefaultSetParams
) -> rc.ConfigWriteResponse:
    """Codex 0.171's modelProvider/default/set: `model_provider = <id>` in config.toml."""
    ConfigEdit, ConfigWriteError, write_values = (
        config_write.ConfigEdit, config_write.ConfigWriteError, config_write.write_values)

    services = ctx.services
    loaded = services.config
    if params.provider_id not in loaded.model_providers:
        raise ConfigWriteError("configValidationError", f"Model provider `{params.provider_id}` is not configured.")
    flags = [layer for layer in read_layers(loaded, None) if layer.name.get("type") == "sessionFlags"]
    outcome = await asyncio.to_thread(
        write_values, loaded.config_path, [ConfigEdit("model_provider", params.provider_id)],
        codex_home=services.codex_home, higher_layers=flags,
    )
    services.reload_config()
    return rc.ConfigWriteResponse.model_validate(outcome.response)
