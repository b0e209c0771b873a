"""TypeScript export of the protocol (`pycodex app-server generate-ts --out DIR [--experimental]`).

The types are derived from the JSON Schema bundle that `generate-json-schema` writes (one source of
truth: the same models, the same experimental filtering), in Codex's layout: `DIR/ClientRequest.ts`,
`DIR/ServerNotification.ts`, `DIR/ServerRequest.ts` and `DIR/RequestId.ts` (the message unions),
`DIR/v2/<TypeName>.ts` for every other definition, `DIR/serde_json/JsonValue.ts` for values the schema
leaves open, and an `index.ts` re-exporting each folder (the top one also `export * as v2`). Every file
holds one `export type`, imported by others with `import type`, so the output needs no runtime.

Why our own small generator: no maintained Python library turns JSON Schema into TypeScript. The known
converters are npm packages (`json-schema-to-typescript`; the Python wrappers such as
`pydantic-to-typescript` shell out to it), and a product command must not need Node or the network at
generate time. The subset of JSON Schema pydantic emits is small: `$ref`, `const`/`enum`, `anyOf`/`oneOf`/
`allOf`, typed scalars, arrays, tuples (`prefixItems`) and objects with properties and/or
`additionalProperties`; anything else becomes `JsonValue`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

from pycodex.json_types import JsonObj, JsonValue

from .schema_export import finished_bundle

__all__ = ["TOP_LEVEL", "render_type", "typescript_files", "write_typescript"]

#: Definitions Codex keeps in the top folder (the message unions); every other one goes under v2/.
TOP_LEVEL = frozenset({"ClientRequest", "ServerNotification", "ServerRequest", "RequestId"})
_HEADER = "// GENERATED CODE! DO NOT MODIFY BY HAND!\n\n"
_JSON_VALUE = "JsonValue"
_JSON_VALUE_FILE = (
    _HEADER + "export type JsonValue = number | string | boolean | Array<JsonValue> | "
    "{ [key in string]?: JsonValue } | null;\n"
)
_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
_REF_PREFIX = "#/definitions/"
_SCALARS = {"string": "string", "integer": "number", "number": "number", "boolean": "boolean", "null": "null"}


def _literal(value: JsonValue) -> str:
    return json.dumps(value)


def _key(name: str) -> str:
    return name if _IDENTIFIER.match(name) else json.dumps(name)


def _union(parts: Iterable[str]) -> str:
    unique = list(dict.fromkeys(parts))
    if not unique:
        return "never"
    if len(unique) == 1:
        return unique[0]
    return " | ".join(f"({part})" if " & " in part else part for part in unique)


def _doc(text: object, indent: str = "") -> str:
    if not isinstance(text, str) or not text.strip():
        return ""
    body = "\n".join(f"{indent} * {line}".rstrip() for line in text.replace("*/", "*\\/").splitlines())
    return f"{indent}/**\n{body}\n{indent} */\n"


class _Renderer:
    """Renders schemas to TypeScript type expressions, remembering every definition it referenced."""

    def __init__(self) -> None:
        self.refs: set[str] = set()

    def render(self, schema: JsonValue) -> str:
        if schema is True or schema == {} or not isinstance(schema, dict):
            self.refs.add(_JSON_VALUE)
            return _JSON_VALUE
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith(_REF_PREFIX):
            name = ref.removeprefix(_REF_PREFIX)
            self.refs.add(name)
            return name
        if "const" in schema:
            return _literal(schema["const"])
        enum = schema.get("enum")
        if isinstance(enum, list):
            return _union(_literal(value) for value in enum)
        for key in ("anyOf", "oneOf"):
            options = schema.get(key)
            if isinstance(options, list):
                union = _union(self.render(option) for option in options)
                rest = {k: v for k, v in schema.items() if k not in (key, "description", "title", "default")}
                if "properties" in rest:  # an object with shared fields and alternatives: both hold
                    return f"{self._object(rest)} & ({union})"
                return union
        all_of = schema.get("allOf")
        if isinstance(all_of, list):
            parts = [self.render(part) for part in all_of]
            return " & ".join(f"({part})" if " | " in part else part for part in parts) or _JSON_VALUE
        kind = schema.get("type")
        if isinstance(kind, list):
            return _union(self.render({**schema, "type": one}) for one in kind)
        if kind == "array":
            return self._array(schema)
        if kind == "object" or "properties" in schema:
            return self._object(schema)
        if isinstance(kind, str) and kind in _SCALARS:
            return _SCALARS[kind]
        self.refs.add(_JSON_VALUE)
        return _JSON_VALUE

    def _array(self, schema: JsonObj) -> str:
        prefix = schema.get("prefixItems")
        if isinstance(prefix, list):
            return "[" + ", ".join(self.render(item) for item in prefix) + "]"
        items = schema.get("items")
        return f"Array<{self.render(items if items is not None else True)}>"

    def _object(self, schema: JsonObj) -> str:
        properties = schema.get("properties")
        extra = schema.get("additionalProperties")
        required = set(schema.get("required") or [])
        fields = []
        if isinstance(properties, dict):
            for name, prop in properties.items():
                mark = "" if name in required else "?"
                doc = _doc(prop.get("description")) if isinstance(prop, dict) else ""
                fields.append(f"{doc}{_key(name)}{mark}: {self.render(prop)}, ")
        shape = "{ " + "".join(fields) + "}" if fields else ""
        if extra is False and shape:
            return shape
        if shape and extra is None:
            return shape  # pydantic's default: extra keys are ignored, not described
        open_map = "{ [key in string]?: " + self.render(True if extra in (None, True) else extra) + " }"
        return f"{shape} & ({open_map})" if shape else open_map


def render_type(schema: JsonValue) -> tuple[str, set[str]]:
    """A schema as a TypeScript type expression, and the definition names it references."""
    renderer = _Renderer()
    return renderer.render(schema), renderer.refs


def _folder(name: str) -> str:
    if name == _JSON_VALUE:
        return "serde_json"
    return "" if name in TOP_LEVEL else "v2"


def _import_path(from_folder: str, name: str) -> str:
    target = _folder(name)
    if target == from_folder:
        return f"./{name}"
    up = "../" if from_folder else "./"
    return f"{up}{target}/{name}" if target else f"{up}{name}"


def _file(name: str, schema: JsonValue) -> str:
    expression, refs = render_type(schema)
    folder = _folder(name)
    imports = "".join(
        f'import type {{ {ref} }} from "{_import_path(folder, ref)}";\n' for ref in sorted(refs - {name})
    )
    doc = _doc(schema.get("description")) if isinstance(schema, dict) else ""
    return f"{_HEADER}{imports}{chr(10) if imports else ''}{doc}export type {name} = {expression};\n"


def _index(names: Iterable[str], v2: bool) -> str:
    lines = [f'export type {{ {name} }} from "./{name}";\n' for name in sorted(names)]
    if v2:
        lines.append('export * as v2 from "./v2";\n')
    return _HEADER + "".join(lines)


def typescript_files(bundle: JsonObj) -> dict[str, str]:
    """Relative path -> contents of every file `generate-ts` writes for a schema bundle."""
    definitions: JsonObj = bundle["definitions"]
    if _JSON_VALUE in definitions:
        raise ValueError("a protocol model is named JsonValue, the name the open values use")
    files = {f"{_folder(name) + '/' if _folder(name) else ''}{name}.ts": _file(name, schema)
             for name, schema in definitions.items()}
    files["serde_json/JsonValue.ts"] = _JSON_VALUE_FILE
    files["v2/index.ts"] = _index((n for n in definitions if _folder(n) == "v2"), v2=False)
    files["index.ts"] = _index((n for n in definitions if not _folder(n)), v2=True)
    return files


def write_typescript(out_dir: Path, experimental: bool = False) -> list[Path]:
    """Write the TypeScript types of the protocol under `out_dir`; returns the paths written."""
    written = []
    for relative, text in typescript_files(finished_bundle(experimental)).items():
        path = out_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
