"""Base classes and field markers shared by every Codex v2 wire model.

Owns: the camelCase wire configuration, the field markers (experimental fields, keys Codex omits when
null) and `to_wire`. The serde-style error texts come from :mod:`pycodex.jsonrpc.serde`.
"""

from __future__ import annotations

from collections.abc import Iterable
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

from pycodex.json_types import JsonObj

# The serde-error translator lives in the JSON-RPC core (both servers use it); re-exported for the models.
from pycodex.jsonrpc.serde import (
    SerdeType,
    codex_error_message,
    describe_json_value,
    unknown_variant_message,
)

__all__ = [
    "EXPERIMENTAL",
    "NOT_ABSOLUTE",
    "OMIT_IF_NONE",
    "EmptyObject",
    "Experimental",
    "ExperimentalVariant",
    "OmitIfNone",
    "OmittingWireModel",
    "ParamsModel",
    "SerdeType",
    "WireModel",
    "codex_error_message",
    "describe_json_value",
    "field_error_message",
    "names",
    "to_wire",
    "unknown_variant_message",
]


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


EXPERIMENTAL = Experimental()
OMIT_IF_NONE = OmitIfNone()
#: serde's text when a relative path reaches an AbsolutePathBuf field (Codex 0.169.0).
NOT_ABSOLUTE = "Invalid request: AbsolutePathBuf deserialized without a base path"


class WireModel(BaseModel):
    """A Codex wire object: camelCase keys on the wire, Python names in code, unknown keys ignored.

    Field declaration order IS the emitted key order, so subclasses declare fields exactly in the
    order the real Codex serializes them.
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="ignore",
        defer_build=True,
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


def to_wire(model: BaseModel) -> JsonObj:
    """Serialize a model to the JSON-ready dict Codex would send (camelCase, Codex key order, nulls kept)."""
    data = model.model_dump(mode="json", by_alias=True)
    if not isinstance(data, dict):
        raise TypeError(f"{type(model).__name__} does not serialize to an object")
    return data


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
