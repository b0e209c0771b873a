"""JSON Schema export of pycodex's protocol models (`pycodex app-server generate-json-schema --out DIR`).

Layout mirrors `codex app-server generate-json-schema`: `DIR/v2/<ModelName>.json` for each
params/response/notification/server-request model, plus the bundle
`DIR/codex_app_server_protocol.v2.schemas.json` holding every model under `definitions` (SDKs read
`v2/TurnStartParams.json` etc. to probe which properties a server supports). Experimental fields carry
`"x-experimental": true` and are left out unless `experimental=True` (like Codex's `--experimental`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from .approvals import SERVER_REQUESTS
from .methods import METHODS
from .notifications import NOTIFICATIONS

BUNDLE_NAME = "codex_app_server_protocol.v2.schemas.json"
_DRAFT = "http://json-schema.org/draft-07/schema#"
_REF_TEMPLATE = "#/definitions/{model}"


def exported_models() -> list[type[BaseModel]]:
    """Every top-level model we export, deduplicated, in a stable order."""
    seen: dict[str, type[BaseModel]] = {}
    for spec in METHODS.values():
        seen.setdefault(spec.params.__name__, spec.params)
        seen.setdefault(spec.response.__name__, spec.response)
    for model in NOTIFICATIONS.values():
        seen.setdefault(model.__name__, model)
    for params, response in SERVER_REQUESTS.values():
        seen.setdefault(params.__name__, params)
        seen.setdefault(response.__name__, response)
    return list(seen.values())


def _single_schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema(by_alias=True, ref_template=_REF_TEMPLATE)
    defs = schema.pop("$defs", None)
    out: dict[str, Any] = {"$schema": _DRAFT, **schema}
    if defs:
        out["definitions"] = defs
    return out


def bundle_schema() -> dict[str, Any]:
    """One document with every exported model (and everything they reference) under `definitions`."""
    models = exported_models()
    _, top = models_json_schema(
        [(m, "validation") for m in models], by_alias=True, ref_template=_REF_TEMPLATE
    )
    return {
        "$schema": _DRAFT,
        "title": "PycodexAppServerProtocolV2",
        "type": "object",
        "definitions": top.get("$defs", {}),
        "x-methods": {name: spec.experimental for name, spec in METHODS.items()},
        "x-notifications": sorted(NOTIFICATIONS),
    }


def _strip_experimental(node: Any) -> Any:
    """Remove properties marked `x-experimental` everywhere in a schema document."""
    if isinstance(node, list):
        return [_strip_experimental(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _strip_experimental(value) for key, value in node.items()}
    properties = out.get("properties")
    if isinstance(properties, dict):
        gated = {k for k, v in properties.items() if isinstance(v, dict) and v.get("x-experimental")}
        out["properties"] = {k: v for k, v in properties.items() if k not in gated}
        if isinstance(out.get("required"), list):
            out["required"] = [k for k in out["required"] if k not in gated]
    return out


def _require_tags(node: Any) -> Any:
    """Mark single-value properties (union tags such as ``type``) required, as serde's tags are.

    Our models give tags a default so that building a response needs no boilerplate; without this the
    schema would call them optional, and a client written against it could omit a tag Codex requires.
    """
    if isinstance(node, list):
        return [_require_tags(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _require_tags(value) for key, value in node.items()}
    properties = out.get("properties")
    if isinstance(properties, dict):
        tags = [
            key for key, prop in properties.items()
            if isinstance(prop, dict) and "default" in prop
            and (prop.get("const", object()) == prop["default"] or prop.get("enum") == [prop["default"]])
        ]
        if tags:
            required = list(out.get("required", []))
            out["required"] = required + [key for key in tags if key not in required]
    return out


def _write(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(json.dumps(document, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    return path


def write_json_schema(out_dir: Path, experimental: bool = False) -> list[Path]:
    """Write one schema file per model under `out_dir/v2/` plus the bundle; returns the paths written."""
    v2 = out_dir / "v2"
    v2.mkdir(parents=True, exist_ok=True)

    def finish(document: dict[str, Any]) -> dict[str, Any]:
        document = _require_tags(document)
        return document if experimental else _strip_experimental(document)

    written = [
        _write(v2 / f"{model.__name__}.json", finish(_single_schema(model))) for model in exported_models()
    ]
    written.append(_write(out_dir / BUNDLE_NAME, finish(bundle_schema())))
    return written
