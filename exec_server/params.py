"""Turning raw JSON params into wire models, with serde-like messages for -32602.

Codex (serde) answers bad params with texts such as ``missing field `argv` `` or ``invalid type:
null, expected struct InitializeParams``; we reproduce the common ones so clients that match on them
keep working.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from pycodex.jsonrpc.errors import InvalidParams

__all__ = ["parse_params"]

M = TypeVar("M", bound=BaseModel)

_JSON_KIND = {
    bool: "boolean",
    int: "integer",
    float: "floating point",
    str: "string",
    list: "sequence",
    dict: "map",
    type(None): "null",
}


def _kind(value: Any) -> str:
    return _JSON_KIND.get(type(value), type(value).__name__)


def _unexpected(value: Any) -> str:
    """serde's ``Unexpected`` rendering, which Codex uses for values nested inside a param."""
    if isinstance(value, bool):
        return f"boolean `{str(value).lower()}`"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, float):
        return f"floating point `{value}`"
    if isinstance(value, str):
        return f"string {json.dumps(value)}"
    return _kind(value)


def _variants(expected: str) -> str:
    """pydantic's ``'a', 'b' or 'c'`` as serde's ``one of `a`, `b`, `c` `` (or `` `a` or `b` ``)."""
    names = [f"`{name}`" for name in re.findall(r"'([^']*)'", expected)]
    if len(names) == 2:
        return f"{names[0]} or {names[1]}"
    if len(names) == 1:
        return names[0]
    return "one of " + ", ".join(names)


#: serde's "expected" text for models that are tagged enums on the Rust side.
_EXPECTING = {"ExecPermissionProfile": "internally tagged enum ExecPermissionProfile"}


def _expected(error_type: str) -> str:
    if error_type.startswith("bool"):
        return "a boolean"
    if error_type.startswith("int"):
        return "an integer"
    if error_type.startswith("string"):
        return "a string"
    if error_type.startswith("list"):
        return "a sequence"
    if error_type.startswith(("dict", "model")):
        return "a map"
    return "a valid value"


def _message(model: type[BaseModel], exc: ValidationError) -> str:
    first = exc.errors()[0]
    loc = first.get("loc", ())
    field = str(loc[-1]) if loc else ""
    kind = first["type"]
    if kind == "missing":
        return f"missing field `{field}`"
    if kind == "value_error":
        return str(first.get("ctx", {}).get("error", first["msg"]))
    if kind == "literal_error":
        expected = first.get("ctx", {}).get("expected", "")
        return f"unknown variant `{first.get('input')}`, expected {_variants(expected)}"
    value = first.get("input")
    if kind == "model_type":
        name = str(first.get("ctx", {}).get("class_name", ""))
        got = _unexpected(value) if isinstance(value, str) or len(loc) > 1 else _kind(value)
        got = "number" if got.startswith("integer") and len(loc) == 1 else got
        return f"invalid type: {got}, expected {_EXPECTING.get(name, f'struct {name}')}"
    got = _unexpected(value) if len(loc) > 1 else _kind(value)
    return f"invalid type: {got}, expected {_expected(kind)}"


def parse_params(model: type[M], params: Any) -> M:
    """Validate ``params`` (a JSON value, None when absent) into ``model`` or raise -32602."""
    if not isinstance(params, dict):
        raise InvalidParams(f"invalid type: {_kind(params)}, expected struct {model.__name__}")
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        raise InvalidParams(_message(model, exc)) from exc
