"""The client-request table pycodex serves, and the experimental-API gate on params.

`METHODS[name]` gives the params model, the response model and whether the method itself is
experimental. `experimental_fields_present` finds the first experimental field a request uses, with
the descriptor Codex puts in front of "requires experimentalApi capability".
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, NamedTuple

from pydantic import BaseModel

from .base import Experimental, ExperimentalVariant, ParamsModel, WireModel
from .initialize import InitializeParams, InitializeResponse
from .method_names import EXPERIMENTAL_METHODS
from .server_info import (
    ConfigReadParams,
    ConfigReadResponse,
    GetAccountParams,
    GetAccountResponse,
    ModelListParams,
    ModelListResponse,
    SkillsListParams,
    SkillsListResponse,
)
from .threads import (
    ThreadArchiveParams,
    ThreadArchiveResponse,
    ThreadForkParams,
    ThreadForkResponse,
    ThreadListParams,
    ThreadListResponse,
    ThreadLoadedListParams,
    ThreadLoadedListResponse,
    ThreadReadParams,
    ThreadReadResponse,
    ThreadResumeParams,
    ThreadResumeResponse,
    ThreadSetNameParams,
    ThreadSetNameResponse,
    ThreadStartParams,
    ThreadStartResponse,
    ThreadTurnsListParams,
    ThreadTurnsListResponse,
    ThreadUnarchiveParams,
    ThreadUnarchiveResponse,
    ThreadUnsubscribeParams,
    ThreadUnsubscribeResponse,
)
from .turns import (
    TurnInterruptParams,
    TurnInterruptResponse,
    TurnStartParams,
    TurnStartResponse,
    TurnSteerParams,
    TurnSteerResponse,
)


class MethodSpec(NamedTuple):
    params: type[ParamsModel]
    response: type[WireModel]
    experimental: bool


def _spec(params: type[ParamsModel], response: type[WireModel]) -> tuple[str, MethodSpec]:
    return params.METHOD, MethodSpec(params, response, params.METHOD in EXPERIMENTAL_METHODS)


METHODS: MappingProxyType[str, MethodSpec] = MappingProxyType(
    dict(
        [
            _spec(InitializeParams, InitializeResponse),
            _spec(ThreadStartParams, ThreadStartResponse),
            _spec(ThreadResumeParams, ThreadResumeResponse),
            _spec(ThreadForkParams, ThreadForkResponse),
            _spec(ThreadListParams, ThreadListResponse),
            _spec(ThreadReadParams, ThreadReadResponse),
            _spec(ThreadArchiveParams, ThreadArchiveResponse),
            _spec(ThreadUnarchiveParams, ThreadUnarchiveResponse),
            _spec(ThreadSetNameParams, ThreadSetNameResponse),
            _spec(ThreadLoadedListParams, ThreadLoadedListResponse),
            _spec(ThreadUnsubscribeParams, ThreadUnsubscribeResponse),
            _spec(ThreadTurnsListParams, ThreadTurnsListResponse),
            _spec(TurnStartParams, TurnStartResponse),
            _spec(TurnInterruptParams, TurnInterruptResponse),
            _spec(TurnSteerParams, TurnSteerResponse),
            _spec(SkillsListParams, SkillsListResponse),
            _spec(ConfigReadParams, ConfigReadResponse),
            _spec(ModelListParams, ModelListResponse),
            _spec(GetAccountParams, GetAccountResponse),
        ]
    )
)

# Client notifications Codex accepts (anything else is dropped silently).
CLIENT_NOTIFICATIONS: tuple[str, ...] = ("initialized",)


def _is_set(value: Any) -> bool:
    # Codex's gate: Option fields count when Some (even Some([]) or Some("")), bools when true.
    return value is not None and value is not False


def experimental_fields_present(params_model_cls: type[BaseModel], raw_params: Any) -> str | None:
    """Descriptor of the first experimental field `raw_params` uses, e.g. `thread/start.dynamicTools`.

    Looks at the raw JSON (so it works before validation). Returns None when nothing experimental
    is used. The router answers `-32600 "<descriptor> requires experimentalApi capability"`.
    """
    if not isinstance(raw_params, dict):
        return None
    method = getattr(params_model_cls, "METHOD", "") or params_model_cls.__name__
    for name, field in params_model_cls.model_fields.items():
        alias = field.alias or name
        key = alias if alias in raw_params else name if name in raw_params else None
        if key is None:
            continue
        value = raw_params[key]
        for marker in field.metadata:
            if isinstance(marker, Experimental) and _is_set(value):
                return f"{method}.{alias}"
            if isinstance(marker, ExperimentalVariant) and isinstance(value, dict) and marker.key in value:
                return marker.descriptor
    return None


def experimental_field_names(params_model_cls: type[BaseModel]) -> tuple[str, ...]:
    """Wire names of the fields marked experimental on a params model."""
    return tuple(
        field.alias or name
        for name, field in params_model_cls.model_fields.items()
        if any(isinstance(m, Experimental) for m in field.metadata)
    )


def response_model(method: str) -> type[WireModel]:
    """The response model of a served method (KeyError for methods we do not serve)."""
    return METHODS[method].response


__all__ = [
    "CLIENT_NOTIFICATIONS",
    "METHODS",
    "MethodSpec",
    "experimental_field_names",
    "experimental_fields_present",
    "response_model",
]
