"""Requests about the server's own state: skills/list, account/read, model/list, config/read and
configRequirements/read. Shapes follow Codex 0.169.0; descriptions are pycodex's own."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from app_server.config.loader import plain_table
from app_server.connection import Session
from app_server.handlers.table import RouteSpec, app_of
from app_server.protocol import server_info as p

if TYPE_CHECKING:
    pass

__all__ = ["ROUTES"]

JsonObj = dict[str, Any]

_EFFORTS = [
    ("low", "Quick answers with light reasoning"),
    ("medium", "A balance of speed and reasoning depth"),
    ("high", "Deeper reasoning for hard problems"),
]


def _model_entry(model: str, *, is_default: bool) -> JsonObj:
    return {
        "id": model, "model": model, "upgrade": None, "upgradeInfo": None, "availabilityNux": None,
        "displayName": model, "description": "The model configured for this pycodex server.",
        "modelSpecialty": None, "hidden": False,
        "supportedReasoningEfforts": [{"reasoningEffort": e, "description": d} for e, d in _EFFORTS],
        "defaultReasoningEffort": "medium", "inputModalities": ["text"], "supportsPersonality": False,
        "multiAgentVersion": None, "additionalSpeedTiers": [], "serviceTiers": [], "defaultServiceTier": None,
        "availableAccessPrograms": None, "isDefault": is_default,
    }


def _layer_name(kind: str, file: str | None) -> JsonObj:
    if kind == "user":
        return {"type": "user", "file": file, "profile": None}
    return {"type": "sessionFlags"}


async def skills_list(session: Session, params: p.SkillsListParams) -> JsonObj:
    cwds = list(params.cwds or []) or [os.getcwd()]
    result: JsonObj = await app_of(session).skills_catalog.list_for_cwds(cwds, bool(params.force_reload))
    return result

async def account_read(session: Session, params: p.GetAccountParams) -> JsonObj:
    provider = app_of(session).config.provider
    result: JsonObj = {"account": None, "userId": None,
                       "requiresOpenaiAuth": bool(provider.requires_openai_auth)}
    if session.experimental_api:
        result["workspaceRouting"] = None
    return result

async def model_list(session: Session, params: p.ModelListParams) -> JsonObj:
    return {"data": [_model_entry(app_of(session).config.model, is_default=True)], "nextCursor": None}

async def config_read(session: Session, params: p.ConfigReadParams) -> JsonObj:
    config = app_of(session).read_config()
    layers = [layer for layer in config.layers if layer.config]
    origins: JsonObj = {}
    for layer in layers:
        for key in _flat_keys(layer.config):
            origins[key] = {"name": _layer_name(layer.kind, layer.file), "version": layer.version}
    result: JsonObj = {"config": plain_table(config.raw), "origins": origins}
    if params.include_layers:
        result["layers"] = [
            {"name": _layer_name(layer.kind, layer.file), "version": layer.version, "config": plain_table(layer.config)}
            for layer in reversed(layers)
        ]
    else:
        result["layers"] = None
    return result

async def requirements_read(session: Session, params: Any) -> JsonObj:
    return {"supportsIndependentSpeedModes": False, "requirements": None}


def _flat_keys(table: Any, prefix: str = "") -> list[str]:
    keys: list[str] = []
    for key, value in table.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            keys += _flat_keys(value, path + ".")
        else:
            keys.append(path)
    return keys


ROUTES = (
    RouteSpec("skills/list", p.SkillsListParams, skills_list),
    RouteSpec("account/read", p.GetAccountParams, account_read),
    RouteSpec("model/list", p.ModelListParams, model_list),
    RouteSpec("config/read", p.ConfigReadParams, config_read),
    RouteSpec("configRequirements/read", None, requirements_read),
)
