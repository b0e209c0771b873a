"""Method routing shared by both servers: method -> (params model, handler), and the error boundary.

``Router.dispatch`` runs one request through the same steps on every server, in Codex's order:
look the method up (``unknown_method`` says what a miss gets), parse the params (``parse``), apply the
server's gate (``gate``: its initialize handshake, capability checks), run the handler. It is the one
place where exceptions become wire errors: an ``RpcError`` keeps its code and message, anything else
goes through ``boundary`` (logged, answered with -32603 unless the server maps it to something better).

A server subclasses ``Router`` to supply its own gate and its own unknown-method text, and fills the
table with ``add``; the connection then only decides *when* to dispatch (queueing, ordering).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from pycodex.json_types import JsonValue
from pycodex.jsonrpc.errors import InternalError, InvalidParams, MethodNotFound, RpcError
from pycodex.jsonrpc.path_fields import first_nul_path
from pycodex.jsonrpc.serde import Framing, validate
from pycodex.jsonrpc.unknown_fields import find_unknown_fields

__all__ = ["MAX_SHOWN_METHOD", "Route", "Router", "shown_method"]

logger = logging.getLogger(__name__)

#: How much of a client's method name an error or log line repeats (a 1 MiB name is not echoed whole).
MAX_SHOWN_METHOD = 100


def shown_method(method: str) -> str:
    """``method`` as an error or log line may repeat it: at most :data:`MAX_SHOWN_METHOD` characters + "…"."""
    return method if len(method) <= MAX_SHOWN_METHOD else method[:MAX_SHOWN_METHOD] + "…"

#: What handlers are called with: the server's per-connection session.
C = TypeVar("C")


@dataclass(frozen=True, slots=True)
class Route(Generic[C]):
    """One method of a server's table: its params model (None: params are ignored), handler and gate data."""

    method: str
    params_model: type[BaseModel] | None
    # ``Any``: the table is heterogeneous, each handler takes its own params model (or None), and a
    # callable's parameter is contravariant, so no narrower type admits them all.
    handler: Callable[[C, Any], Awaitable[object]]
    #: What the server's gate needs to know about the route (an experimental flag, a method family).
    meta: object = None


class Router(Generic[C]):
    """A table of routes built at startup; one per server, shared by its connections."""

    #: How params are turned into the route's model (strict and field-naming unless a server differs).
    framing = Framing.REQUEST
    #: Refuse an unknown sandbox/approval/permission field instead of ignoring it. Only sound where the
    #: params models declare every field the real client sends (the app-server's mirror Codex's schema).
    refuse_unknown_safety_fields = True

    def __init__(self) -> None:
        self._routes: dict[str, Route[C]] = {}

    def add_route(self, route: Route[C]) -> None:
        """Register ``route``; a method registered twice is a programming error (ValueError)."""
        if route.method in self._routes:
            raise ValueError(f"route {route.method} registered twice")
        self._routes[route.method] = route

    @property
    def methods(self) -> list[str]:
        """The methods registered so far, in registration order."""
        return list(self._routes)

    def __iter__(self) -> Iterator[Route[C]]:
        return iter(self._routes.values())

    async def dispatch(self, session: C, method: str, params: JsonValue, has_params: bool) -> object:
        """Run one request; return its result or raise ``RpcError``."""
        try:
            route = self.route(method)
            if route is None:
                raise self.unknown_method(session, method)
            parsed = self.parse(route, params, has_params)
            self.gate(session, route, params)
            return await route.handler(session, parsed)
        except RpcError:
            raise
        except Exception as exc:
            raise self.boundary(method, exc) from None

    # -- what a server may change -----------------------------------------------------------------
    def route(self, method: str) -> Route[C] | None:
        """The route of ``method``, or None (a server may register its routes lazily here)."""
        return self._routes.get(method)

    def unknown_method(self, session: C, method: str) -> RpcError:
        """The error a method missing from the table gets (-32601 with the server's wording)."""
        return MethodNotFound(f"method `{shown_method(method)}` not found")

    def parse(self, route: Route[C], params: JsonValue, has_params: bool) -> BaseModel | None:
        """Validate ``params`` into the route's model (``InvalidParams`` in this router's framing on failure).
        """
        if route.params_model is None:
            return None
        parsed = validate(route.params_model, params, self.framing)
        self.check_unknown_fields(route, params)
        if (field := first_nul_path(params)) is not None:
            prefix = "Invalid request: " if self.framing is Framing.REQUEST else ""
            raise InvalidParams(f"{prefix}invalid value for `{field}`: a path may not contain a NUL byte")
        return parsed

    def check_unknown_fields(self, route: Route[C], params: JsonValue) -> None:
        """A newer client's unknown fields are ignored (logged at debug), except a sandbox, approval or
        permission field, refused with -32602 naming it (see :mod:`pycodex.jsonrpc.unknown_fields`)."""
        if route.params_model is None or not isinstance(params, dict):
            return
        unknown = find_unknown_fields(route.params_model, params)
        if unknown.ignored:
            logger.debug("%s: ignoring unknown fields %s", route.method, ", ".join(unknown.ignored))
        if unknown.refused and not self.refuse_unknown_safety_fields:
            logger.debug("%s: ignoring unknown fields %s", route.method, ", ".join(unknown.refused))
        elif unknown.refused:
            prefix = "Invalid request: " if self.framing is Framing.REQUEST else ""
            raise InvalidParams(
                f"{prefix}unknown field `{unknown.refused[0]}`: a sandbox, approval or permission setting "
                "this server does not know is refused rather than ignored"
            )

    def gate(self, session: C, route: Route[C], params: JsonValue) -> None:
        """Refuse a request the session may not make yet (raise ``RpcError``); the default allows all."""

    def boundary(self, method: str, exc: Exception) -> RpcError:
        """An exception that is not an ``RpcError``: a bug on our side, logged and answered with -32603."""
        logger.exception("internal error while handling %s", method)
        return InternalError(f"internal error while handling {method}")
