"""Turn pydantic validation failures into the short, field-naming messages the wire carries.

The text follows the shape Codex uses (``Invalid request: missing field `cwd```), never a pydantic
dump, so clients that show the message to a person get one line that names the offending field.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ValidationError

from app_server.protocol.base import describe_json_value

__all__ = ["describe_validation_error", "validate_params"]

# pydantic error-type stem (``string_type``, ``int_parsing``, ...) -> what the field expects, in serde words.
_JSON_TYPES = {
    "string": "a string",
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "a boolean",
    "dict": "a map",
    "model": "a map",
    "typed_dict": "a map",
    "list": "a sequence",
    "tuple": "a sequence",
    "none": "null",
}


def _json_kind(value: Any) -> str:
    return describe_json_value(value, max_len=80)


def _field_path(loc: tuple[int | str, ...], data: Any = None) -> str:
    """The wire path of an error location, without pydantic's union-branch labels.

    Labels ("function-after[...]", "list[str]", a tagged union's tag such as "text", a model name) are
    not keys of the input, so the path is walked against the input itself: an element that does not
    step into it is a label, except a final key of an object, which names a missing field.
    """
    parts: list[str] = []
    value = data
    for index, part in enumerate(loc):
        last = index == len(loc) - 1
        if isinstance(part, str) and "[" in part:
            continue
        if isinstance(value, dict):
            if not last and part == value.get("type") and isinstance(part, str):
                continue  # the tag of a tagged union, not a key
            if part in value:
                parts.append(str(part))
                value = value[part]
            elif last:
                parts.append(str(part))
        elif isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value):
            parts.append(str(part))
            value = value[part]
    return ".".join(parts) if parts else "params"


def describe_validation_error(
    exc: ValidationError, *, aliases: dict[str, str] | None = None, data: Any = None
) -> str:
    """One line naming the first offending field (``data``, the validated input, resolves the path)."""
    err = exc.errors(include_url=False)[0]
    loc = tuple(err.get("loc", ()))
    field = _field_path(loc, data)
    kind = err.get("type", "")
    value = err.get("input")
    ctx = err.get("ctx") or {}
    if kind == "missing":
        return f"Invalid request: missing field `{field}`"
    if kind in ("literal_error", "enum") and "expected" in ctx:
        # pydantic lists "'a', 'b' or 'c'"; serde (and so Codex) lists "`a`, `b`, `c`".
        expected = str(ctx["expected"]).replace("'", "`").replace("` or `", "`, `")
        return f"Invalid request: unknown variant `{value}` for `{field}`, expected one of {expected}"
    if kind == "union_tag_invalid":
        tags = str(ctx.get("expected_tags", "")).replace("'", "`")
        tag = ctx.get("tag", value)
        return f"Invalid request: unknown variant `{tag}` for `{field}`, expected one of {tags}"
    if kind == "union_tag_not_found":
        return f"Invalid request: missing field `{field}.type`"
    stem = kind.removesuffix("_type").removesuffix("_parsing").removesuffix("_from_float")
    if stem != kind and stem in _JSON_TYPES:
        return (
            f"Invalid request: invalid type: {_json_kind(value)} for `{field}`, expected {_JSON_TYPES[stem]}"
        )
    msg = str(err.get("msg", "invalid value"))
    shown = json.dumps(value)[:80] if value is not None else "null"
    return f"Invalid request: invalid value {shown} for `{field}`: {msg}"


def validate_params(model: type[BaseModel], params: Any) -> BaseModel:
    """Validate ``params`` into ``model``; raise ``InvalidParams`` naming the field on failure."""
    from pycodex.jsonrpc.errors import InvalidParams

    try:
        # strict: serde never coerces "5" to 5 or 1 to true, so neither may we (JSON input only needs it).
        return model.model_validate(params, strict=True)
    except ValidationError as exc:
        raise InvalidParams(describe_validation_error(exc, data=params)) from None
