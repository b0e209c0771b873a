"""JSON Schema export of pycodex's protocol models (`pycodex app-server generate-json-schema --out DIR`).

Layout mirrors `codex app-server generate-json-schema`: `DIR/v2/<ModelName>.json` for each
params/response/notification/server-request model, the unions `DIR/ClientRequest.json`,
`DIR/ServerNotification.json` and `DIR/ServerRequest.json` (Codex's shape: a `oneOf` of
`{id, method: enum [name], params}` objects), plus the bundle `DIR/codex_app_server_protocol.v2.schemas.json`
holding every model and union under `definitions` (SDKs read `v2/TurnStartParams.json` etc. to probe which
properties a server supports). Experimental fields carry `"x-experimental": true` and are left out unless
`experimental=True`, and so are experimental methods (like Codex's `--experimental`).

The served methods come from the one declaration table (``app_server/protocol/method_table.py``), in its
order; resolving a declaration's params and result models imports the protocol modules that define them, and
no handler (a version-tolerant model a handler validates with, ``accepts``, is not exported). A method whose
declaration has no result model (its handler still assembles a plain dict, or answers later through
``Deferred``) appears in ``ClientRequest`` with its params only; none is made up for it. Params definitions
carry pycodex's model names, which differ from Codex's where one model serves several methods
(``FsPathParams`` for `fs/readFile`, `fs/getMetadata`...). Our server requires ``params`` whenever a method
has a params model, so ``params`` is required there even where Codex accepts it absent.
``ServerNotification`` and ``ServerRequest`` list every message pycodex sends (``server_messages``'
``SERVER_NOTIFICATIONS`` and ``ALL_SERVER_REQUESTS``), under Codex's names; those Codex defines and pycodex
never sends are left out (compat_tests/acknowledged_drift.txt lists them with the reason).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from pycodex.json_types import JsonObj, JsonValue

from .method_table import DECLARATIONS
from .notifications import EXPERIMENTAL_NOTIFICATIONS
from .schema_outputs import always_sent, reachable, with_required
from .server_messages import ALL_SERVER_REQUESTS as SERVER_REQUESTS
from .server_messages import SERVER_NOTIFICATIONS as NOTIFICATIONS

if TYPE_CHECKING:
    from .declarations import MethodDecl

BUNDLE_NAME = "codex_app_server_protocol.v2.schemas.json"
_DRAFT = "http://json-schema.org/draft-07/schema#"
_REF_TEMPLATE = "#/definitions/{model}"


_UNION_DESCRIPTIONS = {
    "ClientRequest": "Request from the client to the server.",
    "ServerNotification": "Notification sent from the server to the client.",
    "ServerRequest": "Request initiated from the server and sent to the client.",
}


class ServedMethod(NamedTuple):
    """One client request pycodex serves, as the schema sees it."""

    method: str
    params: type[BaseModel] | None
    response: type[BaseModel] | None
    experimental: bool


def served_methods(
    experimental: bool = True, declarations: Iterable[MethodDecl] | None = None
) -> list[ServedMethod]:
    """Every declared client method, in declaration order; experimental ones on request."""
    if declarations is None:
        declarations = DECLARATIONS
    return [
        ServedMethod(decl.name, decl.params_model(), decl.result_model(), decl.experimental)
        for decl in declarations
        if experimental or not decl.experimental
    ]


def _notifications(experimental: bool) -> dict[str, type[BaseModel]]:
    return {m: model for m, model in NOTIFICATIONS.items() if experimental or m not in EXPERIMENTAL_NOTIFICATIONS}


def _add(seen: dict[str, type[BaseModel]], model: type[BaseModel]) -> None:
    # Definitions are keyed by class name, so two models sharing one would make a `$ref` ambiguous.
    known = seen.setdefault(model.__name__, model)
    if known is not model:
        raise ValueError(f"two protocol models are both named {model.__name__!r}: {known!r} and {model!r}")


def exported_models(
    methods: Sequence[ServedMethod] | None = None, experimental: bool = True
) -> list[type[BaseModel]]:
    """Every top-level model we export, deduplicated, in a stable order."""
    served = served_methods(experimental) if methods is None else methods
    seen: dict[str, type[BaseModel]] = {}
    for method in served:
        for model in (method.params, method.response):
            if model is not None:
                _add(seen, model)
    for model in _notifications(experimental).values():
        _add(seen, model)
    for params, response in SERVER_REQUESTS.values():
        _add(seen, params)
        _add(seen, response)
    return list(seen.values())


def _single_schema(model: type[BaseModel]) -> JsonObj:
    schema = model.model_json_schema(by_alias=True, ref_template=_REF_TEMPLATE)
    defs = schema.pop("$defs", None)
    out: JsonObj = {"$schema": _DRAFT, **schema}
    if defs:
        out["definitions"] = defs
    return out


def _title(method: str) -> str:
    """Codex's variant title stem: `thread/inject_items` -> `Thread/injectItems`."""
    camel = re.sub(r"_([a-z])", lambda match: match.group(1).upper(), method)
    return camel[:1].upper() + camel[1:]


def _variant(method: str, params: type[BaseModel] | None, kind: str, with_id: bool) -> JsonObj:
    title = f"{_title(method)}{kind}"
    properties: JsonObj = {"id": {"$ref": _REF_TEMPLATE.format(model="RequestId")}} if with_id else {}
    properties["method"] = {"enum": [method], "title": f"{title}Method", "type": "string"}
    properties["params"] = (
        {"$ref": _REF_TEMPLATE.format(model=params.__name__)} if params is not None else {"type": "null"}
    )
    required: list[str] = [key for key in ("id", "method") if key in properties]
    if params is not None:
        required.append("params")
    return {"properties": properties, "required": required, "title": title, "type": "object"}


def _union(name: str, variants: Iterable[JsonObj]) -> JsonObj:
    return {"description": _UNION_DESCRIPTIONS[name], "oneOf": list(variants), "title": name}


def union_schemas(methods: Sequence[ServedMethod], experimental: bool = True) -> dict[str, JsonObj]:
    """The message unions (without `definitions`) plus `RequestId`, keyed by definition name."""
    return {
        "RequestId": {"anyOf": [{"type": "string"}, {"format": "int64", "type": "integer"}]},
        "ClientRequest": _union(
            "ClientRequest", (_variant(m.method, m.params, "Request", True) for m in methods)
        ),
        "ServerNotification": _union(
            "ServerNotification",
            (_variant(method, model, "Notification", False) for method, model in _notifications(experimental).items()),
        ),
        "ServerRequest": _union(
            "ServerRequest",
            (_variant(method, params, "Request", True) for method, (params, _) in SERVER_REQUESTS.items()),
        ),
    }


def _definitions(models: Sequence[type[BaseModel]]) -> JsonObj:
    _, top = models_json_schema(
        [(m, "validation") for m in models], by_alias=True, ref_template=_REF_TEMPLATE
    )
    definitions: JsonObj = top.get("$defs", {})
    return definitions


def _always_sent(served: Sequence[ServedMethod], experimental: bool, definitions: JsonObj) -> dict[str, list[str]]:
    """What the server always sends of each output-only definition (see ``schema_outputs``)."""
    outputs = [m.response for m in served if m.response is not None]
    outputs += [*_notifications(experimental).values(), *(params for params, _ in SERVER_REQUESTS.values())]
    inputs = [m.params for m in served if m.params is not None]
    inputs += [response for _, response in SERVER_REQUESTS.values()]
    return always_sent(definitions, outputs, inputs)


def bundle_schema(
    methods: Sequence[ServedMethod] | None = None, experimental: bool = True, models_schema: JsonObj | None = None
) -> JsonObj:
    """One document with every exported model and union (and all they reference) under `definitions`
    (`models_schema`: the models' definitions, when the caller has built them already)."""
    served = served_methods(experimental) if methods is None else methods
    built = _definitions(exported_models(served, experimental)) if models_schema is None else models_schema
    definitions = with_required({"definitions": built}, _always_sent(served, experimental, built))
    return {
        "$schema": _DRAFT,
        "title": "PycodexAppServerProtocolV2",
        "type": "object",
        "definitions": {**definitions["definitions"], **union_schemas(served, experimental)},
        "x-methods": {m.method: m.experimental for m in served},
        "x-notifications": sorted(_notifications(experimental)),
    }


def _union_documents(bundle: JsonObj) -> dict[str, JsonObj]:
    """`ClientRequest.json` etc.: each union with the definitions it reaches, like Codex's top-level files."""
    definitions: JsonObj = bundle["definitions"]
    documents: dict[str, JsonObj] = {}
    for name in ("ClientRequest", "ServerNotification", "ServerRequest"):
        reached = _reachable(definitions, definitions[name])
        documents[name] = {"$schema": _DRAFT, **definitions[name], "definitions": reached}
    return documents


def _reachable(definitions: JsonObj, root: JsonValue) -> JsonObj:
    return reachable(definitions, root, _REF_TEMPLATE.format(model=""))


def _strip_experimental(node: JsonValue) -> JsonValue:
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


def _require_tags(node: JsonValue) -> JsonValue:
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


def _write(path: Path, document: JsonObj) -> Path:
    path.write_text(json.dumps(document, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    return path


def _finish(document: JsonObj, experimental: bool) -> JsonObj:
    document = _require_tags(document)
    return document if experimental else _strip_experimental(document)


def finished_bundle(experimental: bool = False) -> JsonObj:
    """The bundle exactly as `generate-json-schema` writes it (tags required, experimental fields gated)."""
    return _finish(bundle_schema(served_methods(experimental), experimental), experimental)


def write_json_schema(out_dir: Path, experimental: bool = False) -> list[Path]:
    """Write one schema file per model under `out_dir/v2/`, the unions and the bundle; returns the paths."""
    v2 = out_dir / "v2"
    v2.mkdir(parents=True, exist_ok=True)
    served = served_methods(experimental)
    models = exported_models(served, experimental)
    built = _definitions(models)
    sent = _always_sent(served, experimental, built)
    written = [
        _write(v2 / f"{model.__name__}.json",
               _finish(with_required(_single_schema(model), sent, model.__name__), experimental))
        for model in models
    ]
    bundle = _finish(bundle_schema(served, experimental, built), experimental)
    written.extend(_write(out_dir / f"{name}.json", doc) for name, doc in _union_documents(bundle).items())
    written.append(_write(out_dir / BUNDLE_NAME, bundle))
    return written
