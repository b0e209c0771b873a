"""Protocol drift between two app-server JSON Schema bundles (``app-server generate-json-schema``); no I/O.

A bundle is reduced to its *surface*: every method, server request and notification, and the fields of
its params and result (and one level inside them, per ``type``-tagged variant, each variant an entry of
its own), each with the set of JSON types it admits, whether it is required, deprecated, and its
default. :func:`diff_surfaces` compares an old surface (what a client was written against) with a new
one (what it meets) and classifies every difference by the rules table of support/drift_rules.py
(``breaking``, ``risky`` or ``additive``). Which side of the wire a field travels on decides its rule: *inputs* are what the server accepts (method params, answers to
server requests), *outputs* what clients read (method results, notification params, server-request
params). A removed or added field is reported once, at the highest level that changed.

Both generators are read: Codex's (``ClientRequest``/``ServerNotification``/``ServerRequest`` unions
whose variants ``$ref`` their params) and pycodex's (``x-methods``/``x-notifications`` plus the
``<Method>Params``/``<Method>Response``/``<Method>Notification`` naming both follow).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from compat_tests.support.drift_rules import RULES, Change, DriftReport

__all__ = ["RULES", "Change", "DriftReport", "FieldInfo", "diff_surfaces", "merge_bundles", "surface"]

Schema = dict[str, Any]
_MAX_REF_DEPTH = 8
_VARIANT = "variant"


@dataclass(frozen=True)
class FieldInfo:
    """One surface entry: the JSON types it admits (``variant`` for a tagged variant, the kind for a
    method/notification/server-request), whether it is required or deprecated, and its stated default."""

    atoms: frozenset[str]
    required: bool = False
    deprecated: bool = False
    default: str | None = None


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


#: A description that *opens* with the word: "Deprecated: use x", "@deprecated Ignored." (one that merely
#: mentions it, "Concise summary of what is deprecated", describes something else).
_DEPRECATED_DESCRIPTION = re.compile(r"\s*@?deprecated\b", re.IGNORECASE)


def _deprecated(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    return bool(schema.get("deprecated")) or bool(
        _DEPRECATED_DESCRIPTION.match(str(schema.get("description", "")))
    )


def _default(schema: Any) -> str | None:
    if not isinstance(schema, dict) or "default" not in schema:
        return None
    return json.dumps(schema["default"], sort_keys=True)


def _fields(defs: Schema, schema: Any, prefix: str, depth: int, out: dict[str, FieldInfo]) -> None:
    for tag, variant in _variants(defs, schema):
        if tag:
            # The variant itself is an entry: a new one is a value older clients do not know.
            out[f"{prefix}{tag}"] = FieldInfo(frozenset({_VARIANT}), required=True)
        required = set(variant.get("required", []))
        for name, sub in variant["properties"].items():
            path = f"{prefix}{tag}.{name}"
            out[path] = FieldInfo(_atoms(defs, sub), name in required, _deprecated(sub), _default(sub))
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


_LAST_SEGMENT = re.compile(r"(\.[^.\[]+|\[[^\]]*\])$")


def _parent(key: str) -> str | None:
    """The entry one level up: ``method m params.a`` for ``method m params.a.b``, ``method m`` for
    ``method m params.a`` or ``method m params[tag]``; None for a method/notification/server request."""
    kind, name, *rest = key.split(" ", 2)
    if not rest:
        return None
    inner = _LAST_SEGMENT.sub("", rest[0])
    return f"{kind} {name}" if inner in ("params", "result") else f"{kind} {name} {inner}"


def _side(key: str) -> Literal["entry", "input", "output"]:
    """``input``: what the server accepts (request params, answers to server requests); ``output``:
    what a client reads (results, notification params, server-request params)."""
    kind, _, *rest = key.split(" ", 2)
    if not rest:
        return "entry"
    part = "params" if rest[0].startswith("params") else "result"
    accepted = (kind == "method" and part == "params") or (kind == "server-request" and part == "result")
    return "input" if accepted else "output"


def _noun(key: str, info: FieldInfo) -> str:
    if _side(key) == "entry":
        return key  # "method thread/start": the kind names itself
    return f"{'variant' if _VARIANT in info.atoms else 'field'} {key}"


def _removed(key: str, before: FieldInfo) -> Change:
    side = _side(key)
    rule = f"removed-{key.split(' ', 1)[0]}" if side == "entry" else f"removed-{side}"
    return Change(rule, f"removed {_noun(key, before)}")


def _added(key: str, after: FieldInfo) -> Change:
    side = _side(key)
    if side == "entry":
        return Change(f"added-{key.split(' ', 1)[0]}", f"added {key}")
    if side == "output":
        variant = _VARIANT in after.atoms
        return Change("output-value-added" if variant else "added-output", f"added {_noun(key, after)}")
    if after.required and _VARIANT not in after.atoms:
        return Change("added-required-input", f"added required {_noun(key, after)}")
    return Change("added-input", f"added {_noun(key, after)}")


def _enums(atoms: frozenset[str] | set[str]) -> set[str]:
    return {a for a in atoms if a.startswith("enum:")}


def _output_types(key: str, before: FieldInfo, after: FieldInfo) -> list[Change]:
    gained = {a for a in after.atoms if not _covered(a, before.atoms)}
    lost = {a for a in before.atoms if not _covered(a, after.atoms)}
    change = f"{_show(before.atoms)} -> {_show(after.atoms)}"
    if "any" in gained:
        return [Change("output-unconstrained", f"{key} became unconstrained: {change}")]
    # A closed set of strings that became any string gains values, not a type.
    widened_enum = "string" in gained and bool(_enums(before.atoms)) and "string" not in before.atoms
    other = gained - _enums(gained) - {"null"} - ({"string"} if widened_enum else set())
    if other:
        return [Change("output-type-changed", f"changed type of {key}: {change}")]
    out = []
    if "null" in gained:
        out.append(Change("output-became-nullable", f"{key} may be null: {change}"))
    if _enums(gained) or widened_enum:
        out.append(Change("output-value-added", f"added values to {key}: {change}"))
    if _enums(lost):
        out.append(Change("output-value-removed", f"removed values from {key}: {change}"))
    elif lost:
        out.append(Change("narrowed-output", f"narrowed type of {key}: {change}"))
    return out


def _compared(key: str, before: FieldInfo, after: FieldInfo) -> list[Change]:
    """The changes of one entry both sides have."""
    side = _side(key)
    out = []
    types = f"{_show(before.atoms)} -> {_show(after.atoms)}"
    if side == "input":
        if any(not _covered(a, after.atoms) for a in before.atoms):
            out.append(Change("narrowed-input", f"narrowed type of {key}: {types}"))
        elif any(not _covered(a, before.atoms) for a in after.atoms):
            out.append(Change("widened-input", f"widened type of {key}: {types}"))
        if after.required != before.required and _VARIANT not in after.atoms:
            rule = "input-became-required" if after.required else "input-became-optional"
            out.append(Change(rule, f"{key} became {'required' if after.required else 'optional'}"))
    elif side == "output" and _VARIANT not in after.atoms:
        out += _output_types(key, before, after)
        if before.required and not after.required:
            out.append(Change("output-became-optional", f"{key} became optional"))
    if before.default is not None and after.default is not None and before.default != after.default:
        out.append(
            Change("default-changed", f"changed default of {key}: {before.default} -> {after.default}")
        )
    if after.deprecated and not before.deprecated:
        out.append(Change("deprecated", f"deprecated {key}"))
    return out


def diff_surfaces(old: dict[str, FieldInfo], new: dict[str, FieldInfo]) -> DriftReport:
    """Every classified difference from ``old`` (what clients were written against) to ``new``.

    A removal or addition is reported at the highest level that changed: the fields of a removed method
    or variant are not listed again, nor are those of an added one.
    """
    report = DriftReport()
    for key in sorted(old.keys() | new.keys()):
        before, after = old.get(key), new.get(key)
        parent = _parent(key)
        if after is None and before is not None:
            if parent is None or parent in new:
                report.changes.append(_removed(key, before))
        elif before is None and after is not None:
            if parent is None or parent in old:
                report.changes.append(_added(key, after))
        elif before is not None and after is not None:
            report.changes += _compared(key, before, after)
    return report
