"""Pydantic v2 models of the Codex v2 app-server protocol subset pycodex serves.

Modules: `base` (WireModel, markers, to_wire, error text), `common` (ids, enums, policies, errors,
usage), `items` (UserInput / ThreadItem unions), `threads`, `turns`, `initialize`, `server_info`,
`notifications`, `approvals`, `methods` (request table, experimental gate), `method_names`,
`schema_export`. This package imports nothing else from app_server.
"""

from __future__ import annotations

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
from .methods import METHODS, MethodSpec, experimental_fields_present
from .notifications import EXPERIMENTAL_NOTIFICATIONS, NOTIFICATIONS, notification_envelope

__all__ = [
    "CODEX_CLIENT_METHODS",
    "EXPERIMENTAL_METHODS",
    "EXPERIMENTAL_NOTIFICATIONS",
    "METHODS",
    "NOTIFICATIONS",
    "SERVER_REQUESTS",
    "THREAD_ITEM_VARIANTS",
    "UNKNOWN_METHOD_VARIANTS",
    "USER_INPUT_VARIANTS",
    "MethodSpec",
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
