"""Pydantic v2 models of the Codex v2 app-server protocol subset pycodex serves.

Modules: `base` (WireModel, markers, to_wire, error text), `common` (ids, enums, policies, errors,
usage), `items` (UserInput / ThreadItem unions), `threads`, `turns`, `initialize`, `server_info`,
`notifications`, `approvals`, `thread_requests`, `methods` (experimental gate), `declarations` and
`method_table` (one declaration per served method), `method_names` (Codex's method lists), `schema_export`;
the response models of the other methods sit in `responses_*` by family (files and commands, threads,
config, plugins, accounts, the rest), and `responses.RESPONSE_MODELS` maps every served method to its model.
This package imports nothing else from app_server at run time (the method table names handlers by string).

The package itself imports nothing: building every model costs most of a second, and start-up needs
only a few of them, so each name below is resolved from its module on first use (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pycodex.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from .approvals import SERVER_REQUESTS
    from .base import (
        OmittingWireModel,
        ParamsModel,
        WireModel,
        codex_error_message,
        field_error_message,
        to_wire,
        unknown_variant_message,
    )
    from .items import THREAD_ITEM_VARIANTS, USER_INPUT_VARIANTS, ThreadItem, UserInput
    from .method_names import CODEX_CLIENT_METHODS, EXPERIMENTAL_METHODS, UNKNOWN_METHOD_VARIANTS
    from .methods import experimental_fields_present
    from .notifications import EXPERIMENTAL_NOTIFICATIONS, NOTIFICATIONS, notification_envelope
    from .responses import RESPONSE_MODELS

#: Exported name -> the submodule that defines it.
_HOME = {
    "SERVER_REQUESTS": "approvals",
    "OmittingWireModel": "base",
    "ParamsModel": "base",
    "WireModel": "base",
    "codex_error_message": "base",
    "field_error_message": "base",
    "to_wire": "base",
    "unknown_variant_message": "base",
    "THREAD_ITEM_VARIANTS": "items",
    "USER_INPUT_VARIANTS": "items",
    "ThreadItem": "items",
    "UserInput": "items",
    "CODEX_CLIENT_METHODS": "method_names",
    "EXPERIMENTAL_METHODS": "method_names",
    "UNKNOWN_METHOD_VARIANTS": "method_names",
    "experimental_fields_present": "methods",
    "EXPERIMENTAL_NOTIFICATIONS": "notifications",
    "NOTIFICATIONS": "notifications",
    "notification_envelope": "notifications",
    "RESPONSE_MODELS": "responses",
}

__all__ = [
    "CODEX_CLIENT_METHODS",
    "EXPERIMENTAL_METHODS",
    "EXPERIMENTAL_NOTIFICATIONS",
    "NOTIFICATIONS",
    "RESPONSE_MODELS",
    "SERVER_REQUESTS",
    "THREAD_ITEM_VARIANTS",
    "UNKNOWN_METHOD_VARIANTS",
    "USER_INPUT_VARIANTS",
    "OmittingWireModel",
    "ParamsModel",
    "ThreadItem",
    "UserInput",
    "WireModel",
    "codex_error_message",
    "experimental_fields_present",
    "field_error_message",
    "notification_envelope",
    "to_wire",
    "unknown_variant_message",
]


def __getattr__(name: str) -> Any:
    return _lazy(name)


_lazy = lazy_getattr(__name__, _HOME)
