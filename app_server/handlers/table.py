"""How handler modules declare their routes: a table of named functions, registered in one place.

Each handler module lists ``ROUTES``: method, params model, handler, and whether experimental fields of
the params need the ``experimentalApi`` capability. A handler is ``async def h(session, params)`` and
returns its response model (or, where the response is assembled from stored dicts, a dict);
``register_routes`` is the one place that turns a model into the wire dict the connection writes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from app_server.context import HandlerContext, Services
from app_server.protocol.base import to_wire
from app_server.session import Deferred, Session
from pycodex.json_types import JsonObj

if TYPE_CHECKING:
    from app_server.app import AppServer

__all__ = ["Handler", "RouteSpec", "register_routes"]

Handler = Callable[[HandlerContext, Any], Awaitable[BaseModel | JsonObj | Deferred]]


@dataclass(frozen=True, slots=True)
class RouteSpec:
    method: str
    params: type[BaseModel] | None  # None: the method takes no params
    handler: Handler
    #: Experimental fields in the params need the experimentalApi capability.
    probe_experimental: bool = False
    #: The whole method needs the experimentalApi capability.
    experimental: bool = False


def _wire(handler: Handler, services: Services) -> Callable[[Session, Any], Awaitable[JsonObj | Deferred]]:
    async def call(session: Session, params: Any) -> JsonObj | Deferred:
        result = await handler(HandlerContext(session, services), params)
        return to_wire(result) if isinstance(result, BaseModel) else result

    call.__name__ = getattr(handler, "__name__", "handler")
    return call


def register_routes(app: AppServer, routes: Iterable[RouteSpec]) -> None:
    for route in routes:
        probe = app.experimental_probe(route.params) if route.probe_experimental and route.params else None
        app.router.add(
            route.method, route.params, _wire(route.handler, app), experimental=route.experimental,
            experimental_probe=probe,
        )
