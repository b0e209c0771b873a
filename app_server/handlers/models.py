"""model/list, modelProvider/list and modelProvider/capabilities/read, answered from the bundled
catalog (app_server.model.catalog) and the merged config table."""

from __future__ import annotations

from typing import Any

from app_server.connection import Session
from app_server.handlers.table import RouteSpec, app_of
from app_server.model.catalog import catalog, model_list, model_provider_capabilities, model_provider_list
from app_server.protocol import server_info as p

__all__ = ["ROUTES"]

JsonObj = dict[str, Any]


async def list_models(session: Session, params: p.ModelListParams) -> JsonObj:
    return model_list(
        catalog(), app_of(session).config.raw, include_hidden=params.include_hidden, cursor=params.cursor,
        limit=params.limit, model_provider=params.model_provider,
    )


async def list_providers(session: Session, params: Any) -> JsonObj:
    return model_provider_list(app_of(session).config.raw)


async def read_capabilities(session: Session, params: Any) -> JsonObj:
    return model_provider_capabilities(app_of(session).config.raw)


ROUTES = (
    RouteSpec("model/list", p.ModelListParams, list_models),
    RouteSpec("modelProvider/list", None, list_providers),
    RouteSpec("modelProvider/capabilities/read", None, read_capabilities),
)
