"""The model catalog and provider listings: `model/list`, `modelProvider/list`, `modelProvider/capabilities/read`.

Codex 0.169 answers `model/list` from its bundled catalog whatever provider is configured (a custom
provider's own model is not added), so pycodex ships the same catalog as data (catalog.json) and pages
through it the way Codex does: the cursor is the index of the next entry as a decimal string.

    page = model_list(catalog(), config_table, include_hidden=True)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources

from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InvalidRequest

OPENAI_PROVIDER_ID = "openai"
PROVIDER_GONE = (
    "This chat uses model provider \u201c{id}\u201d, which is no longer configured. "
    "Restore this provider\u2019s configuration to continue."
)
# What Codex 0.169 reports for every provider it was seen with (OpenAI and custom gateways alike).
CAPABILITIES = {"imageGeneration": True, "webSearch": True}


@dataclass(frozen=True)
class Catalog:
    """The bundled model catalog: the default model and every model entry as ``model/list`` shows it."""

    default_model: str
    models: tuple[Mapping[str, object], ...]  # wire entries without `isDefault`, in Codex's order


@cache
def catalog() -> Catalog:
    """The bundled catalog (read once; catalog.json is package data)."""
    data = json.loads(resources.files("app_server.model").joinpath("catalog.json").read_text("utf-8"))
    return Catalog(default_model=data["default_model"], models=tuple(data["models"]))


def _configured_providers(config: Mapping[str, object]) -> Mapping[str, object]:
    providers = config.get("model_providers")
    return providers if isinstance(providers, Mapping) else {}


def _check_provider(config: Mapping[str, object], provider_id: str | None) -> None:
    if provider_id is None or provider_id == OPENAI_PROVIDER_ID or provider_id in _configured_providers(config):
        return
    raise InvalidRequest(
        PROVIDER_GONE.format(id=provider_id),
        data={"type": "modelProviderNotConfigured", "modelProvider": provider_id},
    )


def _start(cursor: str | None, total: int) -> int:
    if cursor is None:
        return 0
    if not cursor.isdigit():
        raise InvalidRequest(f"invalid cursor: {cursor}")
    start = int(cursor)
    if start > total:
        raise InvalidRequest(f"cursor {start} exceeds total models {total}")
    return start


def model_list(
    source: Catalog,
    config: Mapping[str, object],
    *,
    include_hidden: bool | None = None,
    cursor: str | None = None,
    limit: int | None = None,
    model_provider: str | None = None,
) -> JsonObj:
    """The `model/list` result for the merged config table `config`. Raises InvalidRequest."""
    _check_provider(config, model_provider)
    entries = [m for m in source.models if include_hidden or not m["hidden"]]
    start = _start(cursor, len(entries))
    end = len(entries) if not limit else min(len(entries), start + limit)
    data = [{**entry, "isDefault": entry["id"] == source.default_model} for entry in entries[start:end]]
    return {"data": data, "nextCursor": str(end) if end < len(entries) else None}


def _provider_summary(provider_id: str, table: Mapping[str, object]) -> JsonObj:
    env_key = table.get("env_key")
    auth: JsonObj = {"mode": "environmentVariable", "envKey": env_key} if env_key else {"mode": "none"}
    return {
        "id": provider_id,
        "name": table.get("name") or provider_id,
        "canEdit": True,
        "baseUrl": table.get("base_url"),
        "settings": {"type": "customGateway", "auth": auth},
    }


def model_provider_list(config: Mapping[str, object]) -> JsonObj:
    """The `modelProvider/list` result: configured providers and the built-in OpenAI one, by id."""
    providers = _configured_providers(config)
    entries = {
        pid: _provider_summary(pid, table)
        for pid, table in providers.items()
        if pid != OPENAI_PROVIDER_ID and isinstance(table, Mapping)
    }
    entries[OPENAI_PROVIDER_ID] = {"id": OPENAI_PROVIDER_ID, "name": "OpenAI", "canEdit": False, "baseUrl": None,
                                   "settings": {"type": "openai"}}
    data = [entries[pid] for pid in sorted(entries)]
    default = config.get("model_provider")
    return {
        "data": data,
        "defaultProviderId": default if isinstance(default, str) else OPENAI_PROVIDER_ID,
        "canChangeDefault": True,
    }


def model_provider_capabilities(config: Mapping[str, object]) -> JsonObj:
    """The `modelProvider/capabilities/read` result (the same for every provider in Codex 0.169)."""
    del config  # kept in the signature: capabilities are per provider in the protocol
    return dict(CAPABILITIES)
