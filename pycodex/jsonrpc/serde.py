"""The one translator from pydantic validation failures to serde's words (what Codex answers).

Codex deserialises params with serde, so a client sees ``missing field `x```, ``unknown variant `v`,
expected one of `a`, `b```, ``invalid type: integer `5`, expected a string``. Everything here starts
from the first pydantic error, read once by :func:`first_problem`, and renders it with serde's
vocabulary. Three framings use it:

* :func:`codex_error_message` - serde's own text, checked against Codex transcripts.
* :func:`request_params_message` - the app-server router's: ``Invalid request: `` and the wire path of
  the offending field (``for `input.0```), so a person sees which field is wrong.
* :func:`bare_params_message` - the exec-server's: serde's text without a prefix, where a top-level
  value is named by its kind only and a struct by its Rust name, as Codex's exec-server answers.

:func:`validate` runs a model and raises ``InvalidParams`` with the chosen framing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from pycodex.jsonrpc.errors import InvalidParams

__all__ = [
    "Framing",
    "Problem",
    "SerdeType",
    "bare_params_message",
    "codex_error_message",
    "describe_json_kind",
    "describe_json_value",
    "first_problem",
    "request_params_message",
    "unknown_variant_message",
    "validate",
]

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class SerdeType:
    """The Rust type name serde prints for a field (`expected u32`), used by `codex_error_message`."""

    name: str


# -- vocabulary -----------------------------------------------------------------------------------
#: pydantic error type -> what serde says the field expects.
_EXPECTED = {
    "string_type": "a string",
    "bool_type": "a boolean",
    "bool_parsing": "a boolean",
    "list_type": "a sequence",
    "tuple_type": "a sequence",
    "dict_type": "a map",
    "model_type": "a map",
    "model_attributes_type": "a map",
    "typed_dict_type": "a map",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
}
_INT_ERRORS = frozenset({"int_type", "int_parsing", "int_from_float"})
_RANGE_ERRORS = frozenset({"greater_than_equal", "greater_than", "less_than_equal", "less_than"})
# Where serde's variant list differs from our Literal (object variants of untagged enums), by value set.
_SERDE_VARIANT_LISTS: dict[frozenset[str], tuple[str, ...]] = {
    frozenset({"untrusted", "on-request", "never"}): ("untrusted", "on-request", "granular", "never"),
}
#: serde's "expected" text for models that are tagged enums on the Rust side.
_RUST_EXPECTING = {"ExecPermissionProfile": "internally tagged enum ExecPermissionProfile"}


def describe_json_value(value: object, max_len: int | None = None) -> str:
    """A JSON value as serde names it in errors: ``integer `5```, ``string "x"``, ``map`` ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean `{str(value).lower()}`"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, float):
        return f"floating point `{value}`"
    if isinstance(value, str):
        return f'string "{value if max_len is None else value[:max_len]}"'
    return describe_json_kind(value)


def describe_json_kind(value: object) -> str:
    """Only the kind of a JSON value (``integer``, ``string``, ``map``), as serde names a whole input."""
    if value is None:
        return "null"
    for kind, name in ((bool, "boolean"), (int, "integer"), (float, "floating point"), (str, "string")):
        if isinstance(value, kind):
            return name
    if isinstance(value, list):
        return "sequence"
    if isinstance(value, Mapping):
        return "map"
    return type(value).__name__


def unknown_variant_message(value: str, expected: Sequence[str]) -> str:
    """serde's text for a bad enum tag: unknown variant `x`, expected one of `a`, `b`."""
    listed = ", ".join(f"`{name}`" for name in expected)
    if len(expected) == 1:
        return f"unknown variant `{value}`, expected {listed}"
    return f"unknown variant `{value}`, expected one of {listed}"


# -- the problem ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Problem:
    """The first pydantic error of a failure, in the terms every framing needs."""

    kind: str
    loc: tuple[int | str, ...]
    value: object
    ctx: Mapping[str, object]
    msg: str
    #: The variant names pydantic expected (a Literal, an Enum, a tagged union's tags), in order.
    variants: tuple[str, ...]

    @property
    def name(self) -> str:
        """The field serde names: the innermost key (union labels and list indexes are not keys)."""
        keys = [part for part in self.loc if isinstance(part, str)]
        return keys[-1] if keys else "?"

    @property
    def serde_variants(self) -> tuple[str, ...]:
        """The expected variants as serde lists them (some enums name more than pydantic saw)."""
        return _SERDE_VARIANT_LISTS.get(frozenset(self.variants), self.variants)

    @property
    def tag(self) -> str:
        """The tag value serde quotes in an unknown-variant error."""
        return str(self.ctx.get("tag", self.value)) if self.kind == "union_tag_invalid" else str(self.value)


def first_problem(error: ValidationError) -> Problem | None:
    """The first error of ``error`` as a ``Problem`` (serde stops at the first), or None if there is none."""
    errors = error.errors(include_url=False)
    if not errors:
        return None
    first = errors[0]
    ctx = first.get("ctx") or {}
    raw = str(ctx.get("expected_tags", ctx.get("expected", "")))
    # pydantic renders "'a', 'b' or 'c'"; keep the quoted names in order
    variants = tuple(p.strip().strip("'") for p in raw.replace(" or ", ", ").split(",") if p.strip())
    return Problem(first["type"], tuple(first["loc"]), first.get("input"), ctx, str(first["msg"]), variants)


def wire_path(loc: Sequence[int | str], data: object) -> str:
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


def _serde_type_at(model: type[BaseModel] | None, loc: Sequence[str | int]) -> str | None:
    """The SerdeType marker of the field a validation error points at (plain model nesting only)."""
    current: object = model
    marker: str | None = None
    for part in loc:
        if not (isinstance(current, type) and issubclass(current, BaseModel)) or not isinstance(part, str):
            return None
        field = next((f for n, f in current.model_fields.items() if part in (n, f.alias)), None)
        if field is None:
            return None
        marker = next((m.name for m in field.metadata if isinstance(m, SerdeType)), None)
        current = field.annotation
    return marker


# -- framings -------------------------------------------------------------------------------------
def codex_error_message(error: ValidationError, model: type[BaseModel] | None = None) -> str:
    """The first validation problem as the serde text Codex puts after `Invalid request: `.

    Pass the params model to get Rust integer names (`expected u32`) for fields marked SerdeType.
    """
    problem = first_problem(error)
    if problem is None:
        return "invalid params"
    kind, value = problem.kind, problem.value
    if kind == "missing":
        return f"missing field `{problem.name}`"
    if kind == "union_tag_invalid" and problem.ctx:
        return unknown_variant_message(problem.tag, problem.serde_variants)
    if kind in ("literal_error", "enum"):
        return unknown_variant_message(str(value), problem.serde_variants)
    if kind == "union_tag_not_found":
        return "missing field `type`"
    if kind in _INT_ERRORS or kind in _RANGE_ERRORS:
        rust = _serde_type_at(model, problem.loc) or "an integer"
        verdict = "invalid value" if kind in _RANGE_ERRORS else "invalid type"
        return f"{verdict}: {describe_json_value(value)}, expected {rust}"
    if kind in _EXPECTED and kind not in ("tuple_type", "typed_dict_type", "float_parsing"):
        return f"invalid type: {describe_json_value(value)}, expected {_EXPECTED[kind]}"
    where = ".".join(part for part in problem.loc if isinstance(part, str))
    return f"{where}: {problem.msg}" if where else problem.msg


def request_params_message(error: ValidationError, data: object = None) -> str:
    """The app-server's -32602 text: serde's words plus the wire path of the field (``data`` is the input)."""
    problem = first_problem(error)
    if problem is None:
        return "Invalid request: invalid params"
    field = wire_path(problem.loc, data)
    kind, value = problem.kind, problem.value
    if kind == "missing":
        return f"Invalid request: missing field `{field}`"
    if kind in ("literal_error", "enum", "union_tag_invalid") and problem.variants:
        listed = ", ".join(f"`{name}`" for name in problem.variants)
        return f"Invalid request: unknown variant `{problem.tag}` for `{field}`, expected one of {listed}"
    if kind == "union_tag_not_found":
        return f"Invalid request: missing field `{field}.type`"
    if kind in _EXPECTED:
        shown = describe_json_value(value, max_len=80)
        return f"Invalid request: invalid type: {shown} for `{field}`, expected {_EXPECTED[kind]}"
    shown = json.dumps(value)[:80] if value is not None else "null"
    return f"Invalid request: invalid value {shown} for `{field}`: {problem.msg}"


def bare_params_message(model: type[BaseModel], error: ValidationError) -> str:
    """The exec-server's -32602 text: serde's words, values at the top level named by kind only."""
    problem = first_problem(error)
    if problem is None:
        return "invalid params"
    kind, value, nested = problem.kind, problem.value, len(problem.loc) > 1
    if kind == "missing":
        return f"missing field `{problem.loc[-1] if problem.loc else ''}`"
    if kind == "value_error":
        return str(problem.ctx.get("error", problem.msg))
    if kind == "literal_error":
        names = [f"`{name}`" for name in problem.variants]
        listed = " or ".join(names) if len(names) <= 2 else "one of " + ", ".join(names)
        return f"unknown variant `{value}`, expected {listed}"
    if kind == "model_type":
        name = str(problem.ctx.get("class_name", ""))
        got = describe_json_value(value) if isinstance(value, str) or nested else describe_json_kind(value)
        got = "number" if got.startswith("integer") and not nested else got
        return f"invalid type: {got}, expected {_RUST_EXPECTING.get(name, f'struct {name}')}"
    got = describe_json_value(value) if nested else describe_json_kind(value)
    return f"invalid type: {got}, expected {_expected_by_family(kind)}"


def _expected_by_family(kind: str) -> str:
    """What a field expects, from the family of a pydantic error (``string_too_short`` -> a string)."""
    for prefix, expected in (
        ("bool", "a boolean"),
        ("int", "an integer"),
        ("string", "a string"),
        ("list", "a sequence"),
        ("dict", "a map"),
        ("model", "a map"),
    ):
        if kind.startswith(prefix):
            return expected
    return "a valid value"


class Framing(Enum):
    """Which framing ``validate`` raises with."""

    REQUEST = "request"  # the app-server router's: strict, ``Invalid request: ... for `field```
    BARE = "bare"  # the exec-server's: lax, serde's text alone, a non-object named as the struct


def validate(model: type[M], params: object, framing: Framing) -> M:
    """Validate JSON ``params`` into ``model`` or raise ``InvalidParams`` (-32602) in ``framing``."""
    if framing is Framing.BARE:
        if not isinstance(params, dict):
            raise InvalidParams(f"invalid type: {describe_json_kind(params)}, expected struct {model.__name__}")
        try:
            return model.model_validate(params)
        except ValidationError as exc:
            raise InvalidParams(bare_params_message(model, exc)) from exc
    try:
        # strict: serde never coerces "5" to 5 or 1 to true, so neither may we (JSON input only needs it).
        return model.model_validate(params, strict=True)
    except ValidationError as exc:
        raise InvalidParams(request_params_message(exc, params)) from None
