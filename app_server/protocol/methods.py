"""The experimental-API gate on params, and the client notifications Codex accepts.

Which methods pycodex serves, with their params and result models, is declared once per method in
``app_server/protocol/method_table.py`` (see ``app_server/protocol/declarations.py``); this module only
inspects a params model. ``experimental_fields_present`` finds the first experimental field a request uses,
with the descriptor Codex puts in front of "requires experimentalApi capability".
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from .base import Experimental, ExperimentalVariant

__all__ = ["CLIENT_NOTIFICATIONS", "experimental_field_names", "experimental_fields_present"]


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
