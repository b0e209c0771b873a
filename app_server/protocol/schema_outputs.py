"""Which exported fields the server always sends: the `required` lists of output-only definitions.

pydantic's validation schema calls every field with a default optional, which is right for what the server
accepts (params) and wrong for what it sends: ``to_wire`` writes every field of a ``WireModel`` (nulls
included) except ``OMIT_IF_NONE`` ones, so a client written against Codex, which requires `turn.items`,
`thread.preview` and the like, may read them unconditionally. A definition that only outputs reach (results,
notifications, server-request params) therefore lists every such field as required; one that inputs reach
too (method params, answers to server requests) keeps pydantic's list, since clients may omit those fields.
"""

from __future__ import annotations

import typing
from collections.abc import Iterable, Iterator

from pydantic import BaseModel

from pycodex.json_types import JsonObj, JsonValue

from .base import WireModel

__all__ = ["always_sent", "model_classes", "with_required"]

_REF_PREFIX = "#/definitions/"


def _annotation_models(annotation: object) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    for arg in typing.get_args(annotation):  # unions, Annotated, list[...], dict[...]
        yield from _annotation_models(arg)


def model_classes(roots: Iterable[type[BaseModel]]) -> dict[str, type[BaseModel]]:
    """Every model reachable from `roots` through field annotations, by class name (the definition key)."""
    found: dict[str, type[BaseModel]] = {}
    pending = list(roots)
    while pending:
        model = pending.pop()
        if found.setdefault(model.__name__, model) is not model:
            continue
        for field in model.model_fields.values():
            pending.extend(m for m in _annotation_models(field.annotation) if m.__name__ not in found)
    return found


def reachable(definitions: JsonObj, root: JsonValue, prefix: str = _REF_PREFIX) -> JsonObj:
    """The definitions ``root`` refers to (``$ref`` of ``prefix`` + name), directly or through each other."""
    found: JsonObj = {}
    pending: list[JsonValue] = [root]
    while pending:
        node = pending.pop()
        if isinstance(node, list):
            pending.extend(node)
        elif isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(prefix):
                name = ref.removeprefix(prefix)
                if name not in found and name in definitions:
                    found[name] = definitions[name]
                    pending.append(definitions[name])
            pending.extend(value for key, value in node.items() if key != "$ref")
    return dict(sorted(found.items()))


def _reached(definitions: JsonObj, names: Iterable[str]) -> set[str]:
    return set(reachable(definitions, [{"$ref": _REF_PREFIX + name} for name in names]))


def always_sent(
    definitions: JsonObj, outputs: Iterable[type[BaseModel]], inputs: Iterable[type[BaseModel]]
) -> dict[str, list[str]]:
    """Definition name -> the wire keys its model always sends, for definitions only outputs reach."""
    output_list, input_list = list(outputs), list(inputs)
    only_out = _reached(definitions, (m.__name__ for m in output_list)) - _reached(
        definitions, (m.__name__ for m in input_list))
    classes = model_classes(output_list)
    out: dict[str, list[str]] = {}
    for name in sorted(only_out):
        model = classes.get(name)
        if model is None or not issubclass(model, WireModel):
            continue
        omitted = model._omit_if_none_keys
        keys = [field.alias or key for key, field in model.model_fields.items()
                if key not in omitted and not field.exclude]
        if keys:
            out[name] = keys
    return out


def _add_required(schema: JsonValue, keys: list[str]) -> JsonValue:
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return schema
    properties = schema["properties"]
    required = list(schema.get("required", []))
    required += [key for key in keys if key in properties and key not in required]
    return {**schema, "required": required}


def with_required(document: JsonObj, additions: dict[str, list[str]], own_name: str | None = None) -> JsonObj:
    """`document` with the always-sent keys required in its definitions (and at its top, named `own_name`)."""
    out = dict(document)
    definitions = out.get("definitions")
    if isinstance(definitions, dict):
        out["definitions"] = {
            name: _add_required(schema, additions[name]) if name in additions else schema
            for name, schema in definitions.items()
        }
    if own_name is not None and own_name in additions:
        top = _add_required(out, additions[own_name])
        if isinstance(top, dict):
            out = top
    return out
