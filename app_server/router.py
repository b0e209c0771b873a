"""Method routing for the app-server: method -> (params model, handler), and the error boundary.

The router is the single place where exceptions become wire errors: ``RpcError`` keeps its code and
message, a validation failure becomes -32602 naming the field, a malformed id or cursor found by the
store becomes -32600, anything else is logged to stderr and answered with a generic -32603. The order of checks follows Codex: an unknown method is reported even
before ``initialize``; params are validated next; then the initialize gate; then experimental gating.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from app_server.store.errors import InvalidCursorError, InvalidThreadIdError
from app_server.validation import validate_params
from pycodex.jsonrpc.errors import InternalError, InvalidRequest, MethodNotFound, RpcError

if TYPE_CHECKING:
    from app_server.connection import Session

__all__ = ["Handler", "Route", "Router"]

logger = logging.getLogger(__name__)

Handler = Callable[["Session", Any], Awaitable[Any]]
#: Returns the descriptor of an experimental field present in the raw params, e.g.
#: "thread/start.selectedCapabilityRoots", or None.
ExperimentalProbe = Callable[[Any], str | None]


@dataclass(frozen=True, slots=True)
class Route:
    method: str
    params_model: type[BaseModel] | None
    handler: Handler
    experimental: bool = False
    experimental_probe: ExperimentalProbe | None = None


class Router:
    """A table of routes built at startup; one per server, shared by its connections."""

    def __init__(self, known_methods: Iterable[str] = (), experimental_methods: Iterable[str] = ()) -> None:
        self._routes: dict[str, Route] = {}
        self._known = set(known_methods)
        self._experimental = frozenset(experimental_methods)

    def add(
        self,
        method: str,
        params_model: type[BaseModel] | None,
        handler: Handler,
        *,
        experimental: bool = False,
        experimental_probe: ExperimentalProbe | None = None,
    ) -> None:
        if method in self._routes:
            raise ValueError(f"route {method} registered twice")
        self._routes[method] = Route(method, params_model, handler, experimental, experimental_probe)

    @property
    def methods(self) -> list[str]:
        return list(self._routes)

    async def dispatch(self, session: Session, method: str, params: Any, has_params: bool) -> Any:
        """Run one request; return its result or raise ``RpcError``."""
        try:
            return await self._dispatch(session, method, params, has_params)
        except RpcError:
            raise
        except (InvalidThreadIdError, InvalidCursorError) as exc:
            # Malformed client input detected below the handler: the client's fault, not ours.
            raise InvalidRequest(str(exc)) from None
        except Exception:
            logger.exception("internal error while handling %s", method)
            raise InternalError(f"internal error while handling {method}") from None

    async def _dispatch(self, session: Session, method: str, params: Any, has_params: bool) -> Any:
        route = self._routes.get(method)
        if route is None:
            if method in self._known or method in self._experimental:
                # A real Codex method we do not implement: Codex would parse it, so the same gates apply.
                if not session.initialized:
                    raise InvalidRequest("Not initialized")
                if method in self._experimental and not session.experimental_api:
                    raise InvalidRequest(f"{method} requires experimentalApi capability")
                raise MethodNotFound(f"method `{method}` is not supported by pycodex")
            expected = ", ".join(f"`{m}`" for m in self._routes)
            raise MethodNotFound(f"Invalid request: unknown variant `{method}`, expected one of {expected}")
        parsed: Any = None
        if route.params_model is not None:
            if not has_params or params is None:
                raise InvalidRequest("Invalid request: missing field `params`")
            parsed = validate_params(route.params_model, params)
        if method == "initialize":
            if session.initialized:
                raise InvalidRequest("Already initialized")
        elif not session.initialized:
            raise InvalidRequest("Not initialized")
        if not session.experimental_api:
            if route.experimental or method in self._experimental:
                raise InvalidRequest(f"{method} requires experimentalApi capability")
            if route.experimental_probe is not None and isinstance(params, dict):
                descriptor = route.experimental_probe(params)
                if descriptor is not None:
                    raise InvalidRequest(f"{descriptor} requires experimentalApi capability")
        return await route.handler(session, parsed)
