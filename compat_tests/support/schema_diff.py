"""Protocol drift between two app-server JSON Schema bundles (``app-server generate-json-schema``); no I/O.

A bundle is reduced to its *surface*: every method, server request and notification, and the fields of
its params and result (and one level inside them, per ``type``-tagged variant), each with the set of
JSON types it admits. :func:`diff_surfaces` compares an old surface with a new one:

* breaking: a removed method or field, a narrowed input type (a JSON type or enum value the old side
  accepted in request params, or in answers to server requests, and the new one does not), a request
  param that became required (outputs may narrow: a client still understands them);
* additions: new methods and fields; deprecations: fields or methods newly described as deprecated.

Both generators are read: Codex's (``ClientRequest``/``ServerNotification``/``ServerRequest`` unions
whose variants ``$ref`` their params) and pycodex's (``x-methods``/``x-notifications`` plus the
``<Method>Params``/``<Method>Response``/``<Method>Notification`` naming both follow).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DriftReport", "FieldInfo", "diff_surfaces", "merge_bundles", "surface"]

Schema = dict[str, Any]
_MAX_REF_DEPTH = 8


@dataclass(frozen=True)
class FieldInfo:
    atoms: frozenset[str]
    required: bool = False
    deprecated: bool = False


@dataclass
class DriftReport:
    breaking: list[str] = field(default_factory=list)
    additions: list[str] = field(default_factory=list)
    deprecations: list[str] = field(default_factory=list)

    def summary(self) -> str:
        parts = [
            f"{len(self.breaking)} breaking",
            f"{len(self.additions)} added",
            f"{len(self.deprecations)} deprecated",
        ]
        lines = [", ".join(parts)]
        lines += [f"BREAKING {line}" for line in self.breaking]
        lines += [f"added {line}" for line in self.additions]
        lines += [f"deprecated {line}" for line in self.deprecations]
        return "\n".join(lines)


def _pascal(method: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in method.split("/"))


def _deref(defs: Schema, schema: Any) -> Schema:
    for _ in range(_MAX_REF_DEPTH):
        if not isinstance(schema, dict) or "$ref" not in schema:
            break
        schema = defs.get(str(schema["$ref"]).rsplit("/", 1)[-1], {})
    return schema if isinstance(schema, dict) else {}


def _atoms(defs: Schema, schema: Any, depth: int = 0) -> frozenset[str]:
    """The JSON types ``schema`` admits: ``string``, ``integer``, ``enum:"x"``, ``object``..., or ``any``."""
    if depth > _MAX_REF_DEPTH or not isinstance(schema, dict):
        return frozenset({"any"})
    schema = _deref(defs, schema)
    if "const" in schema:
        return frozenset({f"enum:{json.dumps(schema['const'])}"})
    if "enum" in schema:
        return frozenset(f"enum:{json.dumps(v)}" for v in schema["enum"])
    out: set[str] = set()
    for key in ("anyOf", "oneOf", "allOf"):
        for option in schema.get(key, []):
            out |= _atoms(defs, option, depth + 1)
    kinds = schema.get("type")
    out |= {kinds} if isinstance(kinds, str) else set(kinds or [])
    if not out and "properties" in schema:
        out.add("object")
    return frozenset(out or {"any"})


def _covered(atom: str, new: frozenset[str]) -> bool:
    if "any" in new or atom in new:
        return True
    if atom == "integer":
        return "number" in new
    if atom.startswith('enum:"'):
        return "string" in new
    return False


def _object_options(defs: Schema, schema: Any, depth: int) -> list[Schema]:
    """The object schemas a (possibly nested) union is made of."""
    schema = _deref(defs, schema)
    options = [o for key in ("anyOf", "oneOf", "allOf") for o in schema.get(key, [])]
    if depth > _MAX_REF_DEPTH or not options:
        return [schema] if "properties" in schema else []
    variants = [obj for o in options for obj in _object_options(defs, o, depth + 1)]
    # Properties beside a union (a flattened envelope) belong to every variant.
    base, required = schema.get("properties", {}), schema.get("required", [])
    return [
        {**v, "properties": {**base, **v["properties"]}, "required": [*required, *v.get("required", [])]}
        for v in variants
    ] or ([schema] if base else [])


def _variants(defs: Schema, schema: Any) -> list[tuple[str, Schema]]:
    """The object shapes a schema allows, tagged ``[type]`` when a union tells them apart by ``type``."""
    objects = _object_options(defs, schema, 0)
    if len(objects) == 1:
        return [("", objects[0])]
    tagged = []
    for option in objects:
        tag = _atoms(defs, option["properties"].get("type", {}))
        if len(tag) == 1 and next(iter(tag)).startswith("enum:"):
            tagged.append((f"[{json.loads(next(iter(tag))[5:])}]", option))
    return tagged


def _deprecated(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    return bool(schema.get("deprecated")) or "deprecated" in str(schema.get("description", "")).lower()


def _fields(defs: Schema, schema: Any, prefix: str, depth: int, out: dict[str, FieldInfo]) -> None:
    for tag, variant in _variants(defs, schema):
        required = set(variant.get("required", []))
        for name, sub in variant["properties"].items():
            path = f"{prefix}{tag}.{name}"
            out[path] = FieldInfo(_atoms(defs, sub), name in required, _deprecated(sub))
            if depth > 0:
                _fields(defs, sub, path, depth - 1, out)


def _union_members(defs: Schema, union: str) -> dict[str, str | None]:
    """method -> params definition name, from a Codex-style request/notification union."""
    members: dict[str, str | None] = {}
    for variant in _deref(defs, defs.get(union, {})).get("oneOf", []):
        props = variant.get("properties", {})
        names = props.get("method", {}).get("enum", [])
        ref = props.get("params", {}).get("$ref")
        if names:
            members[str(names[0])] = str(ref).rsplit("/", 1)[-1] if ref else None
    return members


def _definition(defs: Schema, candidates: list[str | None]) -> Schema | None:
    for name in candidates:
        if name and name in defs:
            return {"$ref": f"#/definitions/{name}"}
    return None


def merge_bundles(bundles: list[Schema]) -> Schema:
    """One bundle from several (Codex splits v1 and v2 definitions across files); earlier ones win."""
    merged: Schema = {"definitions": {}, "x-methods": {}, "x-notifications": [], "x-server-requests": []}
    for bundle in reversed(bundles):
        defs = dict(bundle.get("definitions", {}))
        nested = defs.pop("v2", {})
        merged["definitions"].update(nested.get("definitions", nested) if isinstance(nested, dict) else {})
        merged["definitions"].update(defs)
        merged["x-methods"].update(dict.fromkeys(bundle.get("x-methods", {}), False))
        for key in ("x-notifications", "x-server-requests"):
            merged[key] = sorted(set(merged[key]) | set(bundle.get(key, [])))
    return merged


def surface(bundle: Schema) -> dict[str, FieldInfo]:
    """Every ``KIND NAME`` entry and ``KIND NAME params.a.b`` / ``result.a`` field of a bundle."""
    defs = bundle.get("definitions", {})
    kinds = {
        "method": (
            _union_members(defs, "ClientRequest"),
            bundle.get("x-methods", {}),
            ("Params", "Response"),
        ),
        "notification": (
            _union_members(defs, "ServerNotification"),
            bundle.get("x-notifications", []),
            ("Notification",),
        ),
        "server-request": (
            _union_members(defs, "ServerRequest"),
            bundle.get("x-server-requests", []),
            ("Params", "Response"),
        ),
    }
    out: dict[str, FieldInfo] = {}
    for kind, (union, extra, suffixes) in kinds.items():
        names = dict(union)
        for name in extra:
            names.setdefault(str(name), None)
        for name, params_ref in names.items():
            key = f"{kind} {name}"
            out[key] = FieldInfo(frozenset({kind}))
            stems = [_pascal(name), _pascal(name.split("/", 1)[-1])]
            params = _definition(defs, [params_ref, *(stem + suffixes[0] for stem in stems)])
            if params is not None:
                out[key] = FieldInfo(frozenset({kind}), deprecated=_deprecated(_deref(defs, params)))
                _fields(defs, params, f"{key} params", 1, out)
            if len(suffixes) > 1:
                result = _definition(defs, [stem + suffixes[1] for stem in stems])
                if result is not None:
                    _fields(defs, result, f"{key} result", 1, out)
    return out


def _show(atoms: frozenset[str]) -> str:
    return "|".join(sorted(atoms))


def _is_input(key: str) -> bool:
    """Whether the field is something the server accepts (request params, answers to server requests):
    only there does a narrower type reject what a client sends; an output may narrow freely."""
    return (key.startswith("method ") and " params." in key) or (
        key.startswith("server-request ") and " result." in key
    )


def diff_surfaces(old: dict[str, FieldInfo], new: dict[str, FieldInfo]) -> DriftReport:
    report = DriftReport()
    for key, before in sorted(old.items()):
        after = new.get(key)
        what = "field" if " params" in key or " result" in key else "entry"
        if after is None:
            # A removed field under an already-removed method is reported once, as the method.
            parent = " ".join(key.split(" ")[:2])
            if what == "entry" or parent in new:
                report.breaking.append(f"removed {what if what == 'field' else key.split(' ')[0]} {key}")
            continue
        lost = sorted(a for a in before.atoms if not _covered(a, after.atoms))
        if lost and _is_input(key):
            report.breaking.append(f"narrowed type of {key}: {_show(before.atoms)} -> {_show(after.atoms)}")
        if _is_input(key) and after.required and not before.required:
            report.breaking.append(f"{key} became required")
        if after.deprecated and not before.deprecated:
            report.deprecations.append(key)
    report.additions = [key for key in sorted(new) if key not in old]
    return report
