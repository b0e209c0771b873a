"""Base classes and field markers shared by every Codex v2 wire model.

Owns: the camelCase wire configuration, the field markers (experimental fields, keys Codex omits when
null), `to_wire`, and the translation of pydantic validation errors into the serde-style messages the
real Codex app-server sends (`missing field \\`x\\``, `unknown variant ...`, `invalid type: ...`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import (
    BaseModel,
    ConfigDict,
    GetJsonSchemaHandler,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticUndefined


@dataclass(frozen=True)
class Experimental:
    """Marks a params field that needs the `experimentalApi` capability.

    Codex gates on a *set* value: present and neither null nor `false`; an empty list or string
    still counts (`Some(vec![])`), as observed on the 0.169.0 binary.
    """

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        schema["x-experimental"] = True
        return schema


@dataclass(frozen=True)
class ExperimentalVariant:
    """Marks a field whose value is experimental when it is an object holding `key`.

    Example: `approvalPolicy: {"granular": {...}}` gives the descriptor `askForApproval.granular`.
    """

    key: str
    descriptor: str


@dataclass(frozen=True)
class OmitIfNone:
    """Marks an outbound field that Codex leaves out entirely (rather than sending null) when unset."""


@dataclass(frozen=True)
class SerdeType:
    """The Rust type name serde prints for a field (`expected u32`), used by `codex_error_message`."""

    name: str


EXPERIMENTAL = Experimental()
OMIT_IF_NONE = OmitIfNone()


class WireModel(BaseModel):
    """A Codex wire object: camelCase keys on the wire, Python names in code, unknown keys ignored.

    Field declaration order IS the emitted key order, so subclasses declare fields exactly in the
    order the real Codex serializes them.
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="ignore",
    )

    # keys (alias and python name) where an explicit null means "use the default" (see _null_means_default)
    _null_default_keys: ClassVar[frozenset[str]] = frozenset()
    _omit_if_none_keys: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        null_default: set[str] = set()
        omit: set[str] = set()
        for name, field in cls.model_fields.items():
            keys = {name, field.alias or name}
            if not field.is_required() and (
                field.default_factory is not None
                or (field.default is not PydanticUndefined and field.default is not None)
            ):
                null_default |= keys
            if any(isinstance(m, OmitIfNone) for m in field.metadata):
                omit |= keys
        cls._null_default_keys = frozenset(null_default)
        cls._omit_if_none_keys = frozenset(omit)
        if omit and not issubclass(cls, OmittingWireModel):
            raise TypeError(
                f"{cls.__name__} has OmitIfNone fields but does not derive from OmittingWireModel"
            )

    @model_validator(mode="before")
    @classmethod
    def _null_means_default(cls, data: Any) -> Any:
        # Some SDKs send explicit nulls for every optional param; treat null like an absent key for
        # fields whose default is not null (bools, lists) instead of failing.
        if isinstance(data, dict) and cls._null_default_keys:
            if any(data.get(k, 0) is None for k in cls._null_default_keys):
                return {k: v for k, v in data.items() if not (v is None and k in cls._null_default_keys)}
        return data


class OmittingWireModel(WireModel):
    """A wire model with fields Codex drops from the output when they are null."""

    @model_serializer(mode="wrap")
    def _drop_unset_optionals(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for key in self._omit_if_none_keys:
                if key in data and data[key] is None:
                    del data[key]
        return data


class ParamsModel(WireModel):
    """Params of a client request; `METHOD` names the JSON-RPC method (used in error descriptors)."""

    METHOD: ClassVar[str] = ""


class EmptyObject(WireModel):
    """`{}`: the result of thread/archive, thread/name/set, turn/interrupt, ..."""


def to_wire(model: BaseModel) -> dict[str, Any]:
    """Serialize a model to the JSON-ready dict Codex would send (camelCase, Codex key order, nulls kept)."""
    data = model.model_dump(mode="json", by_alias=True)
    if not isinstance(data, dict):
        raise TypeError(f"{type(model).__name__} does not serialize to an object")
    return data


def unknown_variant_message(value: str, expected: Sequence[str]) -> str:
    """serde's text for a bad enum tag: unknown variant `x`, expected one of `a`, `b`."""
    listed = ", ".join(f"`{name}`" for name in expected)
    if len(expected) == 1:
        return f"unknown variant `{value}`, expected {listed}"
    return f"unknown variant `{value}`, expected one of {listed}"


_SERDE_EXPECTED = {
    "string_type": "a string",
    "bool_type": "a boolean",
    "bool_parsing": "a boolean",
    "list_type": "a sequence",
    "dict_type": "a map",
    "model_type": "a map",
    "model_attributes_type": "a map",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
}


def describe_json_value(value: Any, max_len: int | None = None) -> str:
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
    if isinstance(value, list):
        return "sequence"
    if isinstance(value, Mapping):
        return "map"
    return type(value).__name__


# Where serde's variant list differs from our Literal (object variants of untagged enums), by value set.
_SERDE_VARIANT_LISTS: dict[frozenset[str], tuple[str, ...]] = {
    frozenset({"untrusted", "on-request", "never"}): ("untrusted", "on-request", "granular", "never"),
}
_INT_ERRORS = frozenset({"int_type", "int_parsing", "int_from_float"})
_RANGE_ERRORS = frozenset({"greater_than_equal", "greater_than", "less_than_equal", "less_than"})


def _expected_literals(ctx: dict[str, Any] | None) -> list[str]:
    ctx = ctx or {}
    raw = str(ctx.get("expected_tags", ctx.get("expected", "")))
    # pydantic renders "'a', 'b' or 'c'"; keep the quoted names in order
    found = [part.strip().strip("'") for part in raw.replace(" or ", ", ").split(",") if part.strip()]
    return list(_SERDE_VARIANT_LISTS.get(frozenset(found), found))


def _serde_type_at(model: type[BaseModel] | None, loc: Sequence[str | int]) -> str | None:
    """The SerdeType marker of the field a validation error points at (plain model nesting only)."""
    current: Any = model
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


def codex_error_message(error: ValidationError, model: type[BaseModel] | None = None) -> str:
    """The first validation problem as the serde text Codex puts after `Invalid request: `.

    Pass the params model to get Rust integer names (`expected u32`) for fields marked SerdeType.
    """
    errors = error.errors(include_url=False)
    if not errors:
        return "invalid params"
    first = errors[0]
    kind = first["type"]
    loc = [part for part in first["loc"] if isinstance(part, str)]
    value = first.get("input")
    ctx = first.get("ctx")
    if kind == "missing":
        return f"missing field `{loc[-1] if loc else '?'}`"
    if kind == "union_tag_invalid" and ctx is not None:
        return unknown_variant_message(str(ctx.get("tag")), _expected_literals(ctx))
    if kind in ("literal_error", "enum"):
        return unknown_variant_message(str(value), _expected_literals(ctx))
    if kind == "union_tag_not_found":
        return "missing field `type`"
    if kind in _INT_ERRORS or kind in _RANGE_ERRORS:
        rust = _serde_type_at(model, first["loc"]) or "an integer"
        verdict = "invalid value" if kind in _RANGE_ERRORS else "invalid type"
        return f"{verdict}: {describe_json_value(value)}, expected {rust}"
    expected = _SERDE_EXPECTED.get(kind)
    if expected is not None:
        return f"invalid type: {describe_json_value(value)}, expected {expected}"
    where = ".".join(loc)
    return f"{where}: {first['msg']}" if where else str(first["msg"])


def field_error_message(error: ValidationError) -> str:
    """All problems, each naming the offending field path (for logs and non-wire callers)."""
    parts: list[str] = []
    for item in error.errors(include_url=False):
        where = ".".join(str(p) for p in item["loc"]) or "<params>"
        parts.append(f"{where}: {item['msg']}")
    return "; ".join(parts)


def names(values: Iterable[str]) -> tuple[str, ...]:
    """Freeze an ordered name list (helper for the variant/method tables)."""
    return tuple(values)
