"""One declaration per client method pycodex serves: ``MethodDecl``.

A declaration names the method, its handler, its params and result models, and its stability. The table of
them (``app_server/protocol/method_table.py``) is the only place a served method is declared: the router's
lazy family index, its "unknown variant" listing, the experimental gates and the schema export are all derived
from it.

References are strings so that the table costs nothing to import (no pydantic, no protocol model):
``"threads:thread_start"`` is the function ``thread_start`` of ``app_server.handlers.threads`` (the method's
*family*, imported on the first request for one of its methods), ``"protocol.threads:ThreadStartParams"``
the class in ``app_server.protocol.threads``. They are resolved, once, when the family loads or the schema
is written. A declaration may also hold the objects themselves (a test's toy method does).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

if TYPE_CHECKING:
    from pydantic import BaseModel

    from app_server.context import HandlerContext
    from app_server.session import Deferred
    from pycodex.json_types import JsonObj

__all__ = ["Handler", "MethodDecl", "Stability"]

#: ``async def h(ctx, params) -> R``: R is the result model, or a dict where the handler still assembles one,
#: or a ``Deferred`` answered later.
Handler: TypeAlias = "Callable[[HandlerContext, Any], Awaitable[BaseModel | JsonObj | Deferred]]"
Stability = Literal["stable", "experimental"]

#: Packages the string references are relative to.
HANDLERS_PACKAGE = "app_server.handlers"
MODELS_PACKAGE = "app_server"


@dataclass(frozen=True, slots=True)
class MethodDecl:
    """One served client method."""

    name: str
    #: ``"family:function"`` under ``app_server.handlers``, or the handler itself.
    handler: str | Handler
    #: The params model the schema describes (``None``: the method takes no params).
    params: str | type[BaseModel] | None = None
    #: The result model; ``None`` where the handler still returns a plain dict (or a ``Deferred``).
    result: str | type[BaseModel] | None = None
    #: ``experimental``: the whole method needs the experimentalApi capability.
    stability: Stability = "stable"
    #: Experimental fields of the params need the experimentalApi capability
    #: (``app_server.protocol.methods.experimental_fields_present`` finds them).
    probe: bool = False
    #: The model the router validates with when it is a version-tolerant subclass of ``params`` (the schema
    #: pycodex exports stays Codex 0.169's).
    accepts: str | type[BaseModel] | None = None

    @property
    def experimental(self) -> bool:
        """Whether the whole method needs the experimentalApi capability."""
        return self.stability == "experimental"

    @property
    def family(self) -> str | None:
        """The handler module loaded on first use, or None when the declaration holds its handler."""
        return self.handler.partition(":")[0] if isinstance(self.handler, str) else None

    def handler_fn(self) -> Handler:
        """The handler function (importing its family)."""
        if isinstance(self.handler, str):
            module, _, name = self.handler.partition(":")
            found: Handler = _resolve(f"{HANDLERS_PACKAGE}.{module}", name)
            return found
        return self.handler

    def params_model(self) -> type[BaseModel] | None:
        """The params model of the schema."""
        return _model(self.params)

    def result_model(self) -> type[BaseModel] | None:
        """The result model, or None where the handler returns a plain dict."""
        return _model(self.result)

    def validation_model(self) -> type[BaseModel] | None:
        """The params model requests are validated with."""
        return _model(self.accepts) if self.accepts is not None else self.params_model()


def _model(ref: str | type[BaseModel] | None) -> type[BaseModel] | None:
    if ref is None or isinstance(ref, type):
        return ref
    module, _, name = ref.partition(":")
    found = _resolve(f"{MODELS_PACKAGE}.{module}", name)
    if not isinstance(found, type):
        raise TypeError(f"{ref} is not a model class")
    model: type[BaseModel] = found
    return model


@cache
def _resolve(module: str, name: str) -> Any:
    return getattr(import_module(module), name)
